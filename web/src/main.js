// The Duo Chat page: GitLab's own Duo Chat component (@gitlab/duo-ui) on duo-slice's public API.
import Vue from 'vue';
import { DuoChat } from '@gitlab/duo-ui';
import { GlAlert, GlBadge, GlButton, GlProgressBar } from '@gitlab/ui';
import '@gitlab/ui/dist/index.css';
import '@gitlab/ui/dist/tailwind.css';
import '@gitlab/duo-ui/dist/components.css';
import '@gitlab/duo-ui/dist/tailwind.css';
import 'highlight.js/styles/github.css';
import './page.css';
import { ApiError, createApi, QUERIES } from './api';
import { applyEvent, gatekeeperSuggestions, toChatMessage } from './chat-state';
import { FileView } from './file-view';
import { parseFileHash } from './sources';

const TOKEN_KEY = 'duo-slice-chat-token';
const INDEX_POLL_MS = 1500;

const SLASH_COMMANDS = [
  { name: '/reset', shouldSubmit: true, description: 'Reset the conversation and ignore the previous messages.' },
  { name: '/clear', shouldSubmit: true, description: 'Delete all messages in this conversation.' },
  { name: '/new', shouldSubmit: true, description: 'Start a new conversation.' },
  { name: '/explain', shouldSubmit: false, description: 'Explain the code.' },
  { name: '/tests', shouldSubmit: false, description: 'Write tests for the code.' },
  { name: '/refactor', shouldSubmit: false, description: 'Refactor the code.' },
  { name: '/fix', shouldSubmit: false, description: 'Fix the code.' },
  { name: '/help', shouldSubmit: true, description: 'Learn what Duo Chat can do.' },
];

function signInMessage(error) {
  if (error instanceof ApiError && (error.status === 401 || error.code === 'UNAUTHENTICATED')) {
    return 'This token was not accepted: it is wrong, expired or revoked (or its user is blocked). Create a new personal access token and try again.';
  }
  return `Could not sign in: ${error.message}`;
}

const field = (h, { id, label, hint }, control) =>
  h('div', { class: 'duo-field' }, [h('label', { attrs: { for: id }, class: 'gl-mb-1 gl-block gl-font-bold' }, label), control, hint ? h('p', { class: 'gl-mb-0 gl-mt-1 gl-text-sm gl-text-subtle' }, hint) : null]);

const App = {
  name: 'DuoChatPage',
  data: () => ({
    token: window.sessionStorage.getItem(TOKEN_KEY) || '',
    tokenInput: '',
    signInError: '',
    signingIn: false,
    api: null,
    user: null,
    projects: [],
    projectPath: '',
    branch: '',
    contextMode: 'repository',
    directory: '',
    directories: [],
    directorySearch: '',
    index: null,
    indexMessage: '',
    indexRequesting: false,
    threads: [],
    threadId: null,
    view: 'chat',
    messages: [],
    canceledRequestIds: [],
    pendingRequestId: null,
    chatError: '',
    fileTarget: null,
    clientSubscriptionId: window.crypto.randomUUID(),
  }),
  computed: {
    project() {
      return this.projects.find((project) => project.fullPath === this.projectPath) || null;
    },
    ref() {
      return this.branch.trim() || this.project?.defaultBranch || null;
    },
    isLoading() {
      return Boolean(this.pendingRequestId);
    },
    suggestions() {
      const last = [...this.messages].reverse().find((message) => message.role === 'assistant');
      return gatekeeperSuggestions(last);
    },
    indexProgress() {
      if (!this.index || this.index.state === 'READY') return 100;
      if (!this.index.chunkCount) return 0;
      return Math.min(100, Math.round((this.index.embeddedCount / this.index.chunkCount) * 100));
    },
  },
  created() {
    this.chunks = new Map();
    // Not reactive: bookkeeping for events that arrive while a question is being sent.
    this.sending = false;
    this.early = [];
    window.addEventListener('hashchange', this.onHashChange);
    if (this.token) this.signIn(this.token);
  },
  beforeDestroy() {
    window.removeEventListener('hashchange', this.onHashChange);
    this.stopSession();
  },
  methods: {
    async signIn(token) {
      this.signingIn = true;
      this.signInError = '';
      const api = createApi(token.trim(), { onUnauthorized: () => this.user && this.endSession() });
      try {
        const data = await api.graphql(QUERIES.currentUser);
        if (!data.currentUser) throw new ApiError('Not signed in', { status: 401 });
        this.api = api;
        this.user = data.currentUser;
        this.token = token.trim();
        this.tokenInput = '';
        window.sessionStorage.setItem(TOKEN_KEY, this.token);
        this.subscribe();
        await Promise.all([this.loadProjects(), this.loadThreads()]);
        this.onHashChange();
      } catch (error) {
        api.close();
        window.sessionStorage.removeItem(TOKEN_KEY);
        this.token = '';
        this.signInError ||= signInMessage(error);
      } finally {
        this.signingIn = false;
      }
    },
    signOut() {
      window.sessionStorage.removeItem(TOKEN_KEY);
      this.stopSession();
      Object.assign(this.$data, { token: '', user: null, api: null, projects: [], projectPath: '', messages: [], threads: [], threadId: null, index: null, fileTarget: null, pendingRequestId: null, signInError: '' });
      window.location.hash = '';
    },
    /** The token stopped working while signed in: back to sign-in, saying why. */
    endSession() {
      this.signOut();
      this.signInError = 'Your session ended: the token is no longer accepted (it was revoked or has expired). Sign in with a valid personal access token.';
    },
    stopSession() {
      this.unsubscribe?.();
      this.unsubscribe = null;
      clearTimeout(this.indexTimer);
      this.api?.close();
    },
    subscribe() {
      this.unsubscribe = this.api.subscribe(
        QUERIES.completion,
        { userId: this.user.id, clientSubscriptionId: this.clientSubscriptionId },
        {
          onMessage: (data) => this.onCompletion(data.aiCompletionResponse),
          onError: (error) => {
            this.chatError = error instanceof ApiError && error.code === 'UNAUTHENTICATED' ? signInMessage(error) : `Live answers stopped: ${error.message}`;
          },
        },
      );
    },
    onCompletion(event) {
      if (!event) return;
      const known = this.messages.some((message) => message.requestId === event.requestId);
      // An answer can arrive before aiAction has returned its requestId (the gatekeeper answers at
      // once): it waits until the question is on screen, so the two show in order.
      if (!known && this.sending) {
        this.early = [...this.early.slice(-200), event];
        return;
      }
      // Only events of the conversation on screen: a late answer of a conversation left behind stays there.
      if (!known && !(event.threadId && event.threadId === this.threadId)) return;
      this.messages = applyEvent(this.messages, event, { canceled: this.canceledRequestIds, chunks: this.chunks });
      if (String(event.role).toLowerCase() === 'assistant' && event.chunkId === null && event.requestId === this.pendingRequestId) {
        this.pendingRequestId = null;
        this.loadThreads();
      }
    },
    async loadProjects() {
      const data = await this.api.graphql(QUERIES.projects);
      this.projects = data.projects?.nodes ?? [];
      if (!this.projectPath && this.projects.length) this.selectProject(this.projects[0].fullPath);
    },
    selectProject(fullPath) {
      this.projectPath = fullPath;
      this.branch = '';
      this.directory = '';
      this.directories = [];
      this.directorySearch = '';
      this.refreshIndex();
    },
    async refreshIndex() {
      clearTimeout(this.indexTimer);
      if (!this.project || !this.api) return;
      const path = this.projectPath;
      try {
        const data = await this.api.graphql(QUERIES.codeIndex, { fullPath: path, ref: this.ref });
        if (path !== this.projectPath) return;
        this.index = data.project?.codeIndex ?? null;
        this.indexMessage = '';
        if (this.index && ['PENDING', 'INDEXING'].includes(this.index.state)) this.indexTimer = setTimeout(() => this.refreshIndex(), INDEX_POLL_MS);
        if (this.index?.state === 'READY' && this.contextMode === 'directory') this.loadDirectories();
      } catch (error) {
        this.indexMessage = error.message;
      }
    },
    async loadDirectories() {
      try {
        const data = await this.api.graphql(QUERIES.directories, { fullPath: this.projectPath, ref: this.ref, search: this.directorySearch.trim() || null });
        this.directories = data.project?.codeIndex?.directories ?? [];
      } catch (error) {
        this.indexMessage = error.message;
      }
    },
    async requestIndex() {
      this.indexRequesting = true;
      try {
        const data = await this.api.graphql(QUERIES.indexCreate, { projectPath: this.projectPath, ref: this.ref });
        this.index = data.projectCodeIndexCreate.codeIndex;
        this.indexMessage = '';
        this.refreshIndex();
      } catch (error) {
        this.indexMessage = error.code === 'FORBIDDEN' ? 'Only a maintainer (or higher) of this project can index it.' : error.message;
      } finally {
        this.indexRequesting = false;
      }
    },
    async loadThreads() {
      try {
        const data = await this.api.graphql(QUERIES.threads);
        this.threads = data.aiConversationThreads?.nodes ?? [];
      } catch (error) {
        this.chatError = error.message;
      }
    },
    async openThread(thread) {
      this.cancel();
      this.threadId = thread.id;
      this.view = 'chat';
      this.pendingRequestId = null;
      this.chunks.clear();
      const data = await this.api.graphql(QUERIES.messages, { threadId: thread.id });
      this.messages = (data.aiMessages?.nodes ?? []).map(toChatMessage);
    },
    newChat() {
      this.cancel();
      this.threadId = null;
      this.messages = [];
      this.pendingRequestId = null;
      this.view = 'chat';
    },
    additionalContext() {
      if (!this.project || this.contextMode === 'none') return [];
      const metadata = { projectPath: this.projectPath, ...(this.branch.trim() ? { branch: this.branch.trim() } : {}) };
      if (this.contextMode === 'directory' && this.directory) return [{ category: 'DIRECTORY', id: this.directory, content: '', metadata }];
      return [{ category: 'REPOSITORY', id: this.projectPath, content: '', metadata }];
    },
    async send(prompt) {
      const question = prompt.trim();
      if (!question) return;
      if (question === '/new') return this.newChat();
      this.chatError = '';
      // A newer question supersedes an unfinished answer (the server stops generating it).
      if (this.pendingRequestId) this.canceledRequestIds = [...this.canceledRequestIds, this.pendingRequestId];
      if (question === '/clear' || question === '/clean') this.messages = [];
      this.sending = true;
      this.early = [];
      try {
        const data = await this.api.graphql(QUERIES.chat, {
          question,
          resourceId: this.project?.id ?? null,
          clientSubscriptionId: this.clientSubscriptionId,
          additionalContext: this.additionalContext(),
          threadId: this.threadId,
          conversationType: this.threadId ? null : 'DUO_CHAT',
        });
        const { requestId, errors, threadId } = data.aiAction;
        if (errors?.length) throw new ApiError(errors.join('; '));
        if (threadId) this.threadId = threadId;
        if (!this.messages.some((message) => message.requestId === requestId && message.role === 'user')) {
          this.messages = [...this.messages, toChatMessage({ requestId, role: 'USER', content: question, chunkId: null, threadId })];
        }
        this.pendingRequestId = question === '/reset' || question === '/clear' || question === '/clean' ? null : requestId;
        if (question === '/clear' || question === '/clean') this.messages = [];
      } catch (error) {
        this.pendingRequestId = null;
        this.chatError = error.message;
      } finally {
        this.sending = false;
        const early = this.early;
        this.early = [];
        early.forEach((event) => this.onCompletion(event));
      }
    },
    cancel() {
      if (this.pendingRequestId) this.canceledRequestIds = [...this.canceledRequestIds, this.pendingRequestId];
      this.pendingRequestId = null;
    },
    // GitLab's panel sends the form's choices and its two comments ("didWhat", "improveWhat") like this.
    async sendFeedback(event) {
      const message = event.message;
      if (!message?.id) return;
      const choices = event.feedbackChoices || (event.feedbackType ? [event.feedbackType] : []);
      try {
        await this.api.graphql(QUERIES.feedback, {
          input: {
            aiMessageId: message.id,
            trackingEvent: {
              category: 'ask_gitlab_chat',
              action: 'click_button',
              label: 'response_feedback',
              property: choices.join(',') || 'feedback',
              extra: { improveWhat: event.improveWhat || event.extendedTextFeedback || null, didWhat: event.didWhat || null, promptLocation: 'after_content' },
            },
          },
        });
        this.messages = this.messages.map((existing) => (existing.id === message.id ? { ...existing, extras: { ...existing.extras, hasFeedback: true } } : existing));
      } catch (error) {
        this.chatError = `Feedback was not saved: ${error.message}`;
      }
    },
    onHashChange() {
      const target = parseFileHash(window.location.hash);
      this.fileTarget = target;
    },
    closeFile() {
      this.fileTarget = null;
      if (window.location.hash) window.history.replaceState(null, '', window.location.pathname + window.location.search);
    },
  },
  render(h) {
    if (!this.user) return this.renderSignIn(h);
    return h('div', { class: 'duo-page' }, [
      h('header', { class: 'duo-topbar' }, [
        h('h1', { class: 'gl-m-0 gl-text-lg' }, 'GitLab Duo Chat'),
        h('span', { class: 'gl-ml-auto gl-text-sm', attrs: { 'data-testid': 'signed-in-as' } }, `Signed in as ${this.user.username}`),
        h(GlButton, { props: { size: 'small' }, attrs: { 'data-testid': 'sign-out' }, on: { click: this.signOut } }, 'Sign out'),
      ]),
      h('div', { class: 'duo-body' }, [this.renderSettings(h), this.renderChat(h), this.fileTarget ? h(FileView, { props: { target: this.fileTarget, api: this.api }, on: { close: this.closeFile } }) : null]),
    ]);
  },
};

Object.assign(App.methods, {
  renderSignIn(h) {
    return h('main', { class: 'duo-signin' }, [
      h('form', { class: 'duo-signin-form', attrs: { 'aria-labelledby': 'duo-signin-title' }, on: { submit: (event) => (event.preventDefault(), this.signIn(this.tokenInput)) } }, [
        h('h1', { class: 'gl-mt-0 gl-text-xl', attrs: { id: 'duo-signin-title' } }, 'Sign in to GitLab Duo Chat'),
        h('p', { class: 'gl-text-subtle' }, 'Paste a personal access token with the api or ai_features scope (npm start prints a demo token on its first start). It is kept in this browser tab only.'),
        field(
          h,
          { id: 'duo-token', label: 'Personal access token' },
          h('input', {
            class: 'gl-form-input form-control',
            attrs: { id: 'duo-token', type: 'password', autocomplete: 'off', required: true, spellcheck: 'false', 'aria-describedby': this.signInError ? 'duo-signin-error' : null },
            domProps: { value: this.tokenInput },
            on: { input: (event) => (this.tokenInput = event.target.value) },
          }),
        ),
        this.signInError ? h(GlAlert, { props: { variant: 'danger', dismissible: false }, attrs: { id: 'duo-signin-error', role: 'alert' }, class: 'gl-mt-3' }, this.signInError) : null,
        h(GlButton, { props: { variant: 'confirm', type: 'submit', loading: this.signingIn }, class: 'gl-mt-4', attrs: { type: 'submit' } }, 'Sign in'),
      ]),
    ]);
  },
  renderSettings(h) {
    const index = this.index;
    const state = index?.state ?? 'NOT_INDEXED';
    const indexing = state === 'PENDING' || state === 'INDEXING';
    const badgeVariant = { READY: 'success', FAILED: 'danger', PENDING: 'info', INDEXING: 'info' }[state] || 'neutral';
    return h('aside', { class: 'duo-settings', attrs: { 'aria-label': 'Chat context' } }, [
      field(
        h,
        { id: 'duo-project', label: 'Project' },
        h(
          'select',
          { class: 'gl-form-select custom-select', attrs: { id: 'duo-project' }, domProps: { value: this.projectPath }, on: { change: (event) => this.selectProject(event.target.value) } },
          this.projects.length ? this.projects.map((project) => h('option', { attrs: { value: project.fullPath }, domProps: { selected: project.fullPath === this.projectPath } }, project.fullPath)) : [h('option', { attrs: { value: '' } }, 'No projects you can read')],
        ),
      ),
      field(
        h,
        { id: 'duo-branch', label: 'Branch', hint: this.project?.defaultBranch ? `Empty: ${this.project.defaultBranch}` : null },
        h('input', {
          class: 'gl-form-input form-control',
          attrs: { id: 'duo-branch', placeholder: this.project?.defaultBranch || 'main', autocomplete: 'off' },
          domProps: { value: this.branch },
          on: { input: (event) => (this.branch = event.target.value), change: () => this.refreshIndex() },
        }),
      ),
      h('fieldset', { class: 'duo-field' }, [
        h('legend', { class: 'gl-mb-1 gl-text-base gl-font-bold' }, 'Context'),
        ...[
          ['repository', 'The whole repository'],
          ['directory', 'A directory'],
          ['none', 'No code context'],
        ].map(([value, label]) =>
          h('div', { class: 'gl-form-radio custom-control custom-radio' }, [
            h('input', {
              class: 'custom-control-input',
              attrs: { type: 'radio', name: 'duo-context', id: `duo-context-${value}`, value },
              domProps: { checked: this.contextMode === value },
              on: {
                change: () => {
                  this.contextMode = value;
                  if (value === 'directory') this.loadDirectories();
                },
              },
            }),
            h('label', { class: 'custom-control-label', attrs: { for: `duo-context-${value}` } }, label),
          ]),
        ),
      ]),
      this.contextMode === 'directory'
        ? h('div', [
            field(
              h,
              { id: 'duo-directory-filter', label: 'Filter directories' },
              h('input', {
                class: 'gl-form-input form-control',
                attrs: { id: 'duo-directory-filter', type: 'search', autocomplete: 'off', placeholder: 'e.g. src/auth' },
                domProps: { value: this.directorySearch },
                on: {
                  input: (event) => {
                    this.directorySearch = event.target.value;
                    clearTimeout(this.directoryTimer);
                    this.directoryTimer = setTimeout(() => this.loadDirectories(), 250);
                  },
                },
              }),
            ),
            field(
              h,
              { id: 'duo-directory', label: 'Directory', hint: this.directories.length ? null : this.directorySearch ? 'No indexed directory matches.' : 'Directories appear once the branch is indexed.' },
              h(
                'select',
                { class: 'gl-form-select custom-select', attrs: { id: 'duo-directory' }, domProps: { value: this.directory }, on: { change: (event) => (this.directory = event.target.value) } },
                [
                  h('option', { attrs: { value: '' } }, 'Choose a directory'),
                  // The chosen one stays listed when a filter leaves it out.
                  ...[...new Set([...(this.directory ? [this.directory] : []), ...this.directories])].map((directory) => h('option', { attrs: { value: directory }, domProps: { selected: directory === this.directory } }, directory)),
                ],
              ),
            ),
          ])
        : null,
      h('section', { class: 'duo-field duo-index', attrs: { 'aria-labelledby': 'duo-index-title', 'aria-live': 'polite', 'data-testid': 'index-state' } }, [
        h('h2', { class: 'gl-m-0 gl-mb-2 gl-text-base gl-font-bold', attrs: { id: 'duo-index-title' } }, 'Code index'),
        h('div', { class: 'gl-flex gl-items-center gl-gap-2' }, [
          h(GlBadge, { props: { variant: badgeVariant } }, state === 'NOT_INDEXED' ? 'not indexed' : state.toLowerCase()),
          index ? h('span', { class: 'gl-text-sm gl-text-subtle' }, `${index.filesIndexed} files, ${index.chunkCount} chunks`) : null,
        ]),
        indexing ? h(GlProgressBar, { props: { value: this.indexProgress }, class: 'gl-mt-2', attrs: { 'aria-label': 'Indexing progress', 'aria-valuenow': this.indexProgress, 'aria-valuemin': 0, 'aria-valuemax': 100 } }) : null,
        index?.lastError ? h('p', { class: 'gl-mb-0 gl-mt-2 gl-text-sm gl-text-danger' }, index.lastError) : null,
        this.indexMessage ? h('p', { class: 'gl-mb-0 gl-mt-2 gl-text-sm gl-text-danger', attrs: { role: 'alert' } }, this.indexMessage) : null,
        this.project ? h(GlButton, { props: { size: 'small', loading: this.indexRequesting, disabled: indexing }, class: 'gl-mt-3', attrs: { 'data-testid': 'index-button' }, on: { click: this.requestIndex } }, index ? 'Update the index' : 'Index this branch') : null,
      ]),
      h('nav', { class: 'duo-field duo-threads', attrs: { 'aria-labelledby': 'duo-threads-title' } }, [
        h('div', { class: 'gl-flex gl-items-center' }, [
          h('h2', { class: 'gl-m-0 gl-text-base gl-font-bold', attrs: { id: 'duo-threads-title' } }, 'Conversations'),
          h(GlButton, { props: { size: 'small', icon: 'plus', category: 'tertiary' }, class: 'gl-ml-auto', attrs: { 'data-testid': 'new-chat' }, on: { click: this.newChat } }, 'New'),
        ]),
        h(
          'ul',
          { class: 'gl-m-0 gl-list-none gl-p-0' },
          this.threads.map((thread) =>
            h('li', { key: thread.id }, [
              h('button', { class: { 'duo-thread': true, 'is-active': thread.id === this.threadId }, attrs: { type: 'button', 'aria-current': thread.id === this.threadId ? 'true' : null }, on: { click: () => this.openThread(thread) } }, thread.title || 'Untitled conversation'),
            ]),
          ),
        ),
      ]),
    ]);
  },
  renderChat(h) {
    const suggestions = this.suggestions;
    return h('main', { class: 'duo-chat-main', attrs: { 'aria-label': 'Duo Chat' } }, [
      this.chatError ? h(GlAlert, { props: { variant: 'danger' }, attrs: { role: 'alert', 'data-testid': 'chat-error' }, on: { dismiss: () => (this.chatError = '') } }, this.chatError) : null,
      h(DuoChat, {
        props: {
          title: 'GitLab Duo Chat',
          messages: this.messages,
          isLoading: this.isLoading,
          canceledRequestIds: this.canceledRequestIds,
          slashCommands: SLASH_COMMANDS,
          predefinedPrompts: ['Where is the push webhook token checked?', 'How is the code index built?', 'Explain how this project is structured'],
          showHeader: false,
          badgeType: null,
          chatPromptPlaceholder: this.project ? `Ask about ${this.project.fullPath}…` : 'Ask GitLab Duo…',
        },
        on: {
          'send-chat-prompt': this.send,
          'chat-cancel': this.cancel,
          'track-feedback': this.sendFeedback,
          'new-chat': this.newChat,
        },
      }),
      suggestions && suggestions.prompts.length
        ? h('div', { class: 'duo-suggestions', attrs: { role: 'group', 'aria-label': suggestions.label, 'data-testid': 'gatekeeper-suggestions' } }, [
            h('span', { class: 'gl-text-sm gl-text-subtle' }, `${suggestions.label}:`),
            ...suggestions.prompts.map((prompt) => h(GlButton, { props: { size: 'small' }, on: { click: () => this.send(prompt) } }, prompt)),
          ])
        : null,
    ]);
  },
});

new Vue({ el: '#app', render: (h) => h(App) });
