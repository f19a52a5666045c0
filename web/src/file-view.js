// The read-only file view a citation opens: the file from the indexed snapshot (GitLab's raw
// files API), highlighted, with the cited lines marked and scrolled into view.
import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import c from 'highlight.js/lib/languages/c';
import cpp from 'highlight.js/lib/languages/cpp';
import csharp from 'highlight.js/lib/languages/csharp';
import go from 'highlight.js/lib/languages/go';
import java from 'highlight.js/lib/languages/java';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import kotlin from 'highlight.js/lib/languages/kotlin';
import markdown from 'highlight.js/lib/languages/markdown';
import php from 'highlight.js/lib/languages/php';
import python from 'highlight.js/lib/languages/python';
import ruby from 'highlight.js/lib/languages/ruby';
import rust from 'highlight.js/lib/languages/rust';
import typescript from 'highlight.js/lib/languages/typescript';
import yaml from 'highlight.js/lib/languages/yaml';
import { GlAlert, GlButton, GlLoadingIcon } from '@gitlab/ui';

const LANGUAGES = { bash, c, cpp, csharp, go, java, javascript, json, kotlin, markdown, php, python, ruby, rust, typescript, yaml };
for (const [name, language] of Object.entries(LANGUAGES)) hljs.registerLanguage(name, language);

const EXTENSIONS = {
  ts: 'typescript',
  tsx: 'typescript',
  js: 'javascript',
  jsx: 'javascript',
  mjs: 'javascript',
  cjs: 'javascript',
  rb: 'ruby',
  py: 'python',
  go: 'go',
  java: 'java',
  kt: 'kotlin',
  rs: 'rust',
  c: 'c',
  h: 'c',
  cc: 'cpp',
  cpp: 'cpp',
  hpp: 'cpp',
  cs: 'csharp',
  php: 'php',
  sh: 'bash',
  json: 'json',
  md: 'markdown',
  yml: 'yaml',
  yaml: 'yaml',
};

function languageOf(path, hint) {
  const fromHint = hint && hljs.getLanguage(hint.replace('c_sharp', 'csharp')) ? hint.replace('c_sharp', 'csharp') : null;
  return fromHint || EXTENSIONS[path.split('.').pop()?.toLowerCase()] || null;
}

/** Each line's highlighted HTML. highlight.js escapes the code; spans that cross lines are closed and reopened. */
export function highlightLines(content, language) {
  const html = language
    ? hljs.highlight(content, { language, ignoreIllegals: true }).value
    : content.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
  const lines = [];
  let open = [];
  for (const raw of html.split('\n')) {
    const line = open.join('') + raw;
    for (const match of raw.matchAll(/<span[^>]*>|<\/span>/g)) {
      if (match[0] === '</span>') open.pop();
      else open.push(match[0]);
    }
    lines.push(line + '</span>'.repeat(open.length));
  }
  return lines;
}

export const FileView = {
  name: 'FileView',
  props: {
    target: { type: Object, required: true },
    api: { type: Object, required: true },
  },
  data: () => ({ loading: true, error: '', lines: [], commitSha: null }),
  watch: {
    target: { handler: 'load', immediate: true },
  },
  methods: {
    async load() {
      this.loading = true;
      this.error = '';
      try {
        const file = await this.api.rawFile(this.target);
        this.lines = highlightLines(file.content, languageOf(this.target.path, file.language));
        this.commitSha = file.commitSha;
      } catch (error) {
        this.lines = [];
        this.error =
          error.status === 404
            ? 'This file is not in the project’s code index (it may have been removed, excluded, or not indexed yet).'
            : error.code === 'insufficient_scope'
              ? 'This token cannot read files: that takes a token with the api (or read_api) scope. Sign in with one to open citations.'
              : error.message;
      } finally {
        this.loading = false;
      }
      await this.$nextTick();
      const first = this.$el.querySelector('.duo-file-line.is-cited');
      if (first) first.scrollIntoView({ block: 'center' });
      this.$refs.close?.$el?.focus();
    },
    isCited(number) {
      const { startLine, endLine } = this.target;
      return startLine !== null && number >= startLine && number <= (endLine ?? startLine);
    },
  },
  render(h) {
    const { path, ref, project, startLine, endLine } = this.target;
    const header = h('header', { class: 'duo-file-header' }, [
      h('div', { class: 'duo-file-title' }, [
        h('h2', { class: 'gl-m-0 gl-text-base gl-font-bold', attrs: { id: 'duo-file-title' } }, path),
        h(
          'span',
          { class: 'gl-text-sm gl-text-subtle' },
          `${project} · ` +
            `${ref || 'default branch'}${this.commitSha ? ` @ ${this.commitSha.slice(0, 8)}` : ''}` +
            `${startLine ? ` · lines ${startLine}-${endLine ?? startLine}` : ''}`,
        ),
      ]),
      h(GlButton, {
        ref: 'close',
        props: { icon: 'close', category: 'tertiary' },
        attrs: { 'aria-label': 'Close the file view', 'data-testid': 'file-view-close' },
        on: { click: () => this.$emit('close') },
      }),
    ]);
    let body;
    if (this.loading) body = h(GlLoadingIcon, { props: { size: 'lg' }, class: 'gl-my-6' });
    else if (this.error) body = h(GlAlert, { props: { variant: 'danger', dismissible: false } }, this.error);
    else {
      body = h('pre', { class: 'duo-file-code hljs', attrs: { tabindex: '0', 'aria-label': `Contents of ${path}` } }, [
        h(
          'code',
          this.lines.map((html, index) =>
            h(
              'span',
              { key: index, class: { 'duo-file-line': true, 'is-cited': this.isCited(index + 1) }, attrs: { 'data-line': index + 1 } },
              [
                h('span', { class: 'duo-file-number', attrs: { 'aria-hidden': 'true' } }, String(index + 1)),
                h('span', { class: 'duo-file-text', domProps: { innerHTML: html || ' ' } }),
              ],
            ),
          ),
        ),
      ]);
    }
    return h(
      'section',
      { class: 'duo-file-view', attrs: { role: 'region', 'aria-labelledby': 'duo-file-title', 'data-testid': 'file-view' } },
      [header, body],
    );
  },
};
