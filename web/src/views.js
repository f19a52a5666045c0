// The page's own parts around duo-ui's chat: sign-in, the context settings, the chat column.
// Render functions (Vue 2's runtime build has no template compiler) over the page's state `vm`.
import { DuoChat } from '@gitlab/duo-ui';
import { GlAlert, GlBadge, GlButton, GlProgressBar } from '@gitlab/ui';

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

const field = (h, { id, label, hint }, control) =>
  h('div', { class: 'duo-field' }, [
    h('label', { attrs: { for: id }, class: 'gl-mb-1 gl-block gl-font-bold' }, label),
    control,
    hint ? h('p', { class: 'gl-mb-0 gl-mt-1 gl-text-sm gl-text-subtle' }, hint) : null,
  ]);

export function renderSignIn(h, vm) {
  return h('main', { class: 'duo-signin' }, [
    h(
      'form',
      {
        class: 'duo-signin-form',
        attrs: { 'aria-labelledby': 'duo-signin-title' },
        on: { submit: (event) => (event.preventDefault(), vm.signIn(vm.tokenInput)) },
      },
      [
        h('h1', { class: 'gl-mt-0 gl-text-xl', attrs: { id: 'duo-signin-title' } }, 'Sign in to GitLab Duo Chat'),
        h(
          'p',
          { class: 'gl-text-subtle' },
          'Paste a personal access token with the api scope (npm start prints a demo token on its first start): chat takes ' +
            'ai_features too, but reading cited files takes api. It is kept in this browser tab only.',
        ),
        field(
          h,
          { id: 'duo-token', label: 'Personal access token' },
          h('input', {
            class: 'gl-form-input form-control',
            attrs: {
              id: 'duo-token',
              type: 'password',
              autocomplete: 'off',
              required: true,
              spellcheck: 'false',
              'aria-describedby': vm.signInError ? 'duo-signin-error' : null,
            },
            domProps: { value: vm.tokenInput },
            on: { input: (event) => (vm.tokenInput = event.target.value) },
          }),
        ),
        vm.signInError
          ? h(
              GlAlert,
              { props: { variant: 'danger', dismissible: false }, attrs: { id: 'duo-signin-error', role: 'alert' }, class: 'gl-mt-3' },
              vm.signInError,
            )
          : null,
        h(
          GlButton,
          { props: { variant: 'confirm', type: 'submit', loading: vm.signingIn }, class: 'gl-mt-4', attrs: { type: 'submit' } },
          'Sign in',
        ),
      ],
    ),
  ]);
}

export function renderSettings(h, vm) {
  const index = vm.index;
  const state = index?.state ?? 'NOT_INDEXED';
  const indexing = state === 'PENDING' || state === 'INDEXING';
  const badgeVariant = { READY: 'success', FAILED: 'danger', PENDING: 'info', INDEXING: 'info' }[state] || 'neutral';
  return h('aside', { class: 'duo-settings', attrs: { 'aria-label': 'Chat context' } }, [
    field(
      h,
      { id: 'duo-project', label: 'Project' },
      h(
        'select',
        {
          class: 'gl-form-select custom-select',
          attrs: { id: 'duo-project' },
          domProps: { value: vm.projectPath },
          on: { change: (event) => vm.selectProject(event.target.value) },
        },
        vm.projects.length
          ? vm.projects.map((project) =>
              h(
                'option',
                { attrs: { value: project.fullPath }, domProps: { selected: project.fullPath === vm.projectPath } },
                project.fullPath,
              ),
            )
          : [h('option', { attrs: { value: '' } }, vm.projectsLoaded ? 'No projects you can read' : 'Loading projects…')],
      ),
    ),
    field(
      h,
      { id: 'duo-branch', label: 'Branch', hint: vm.project?.defaultBranch ? `Empty: ${vm.project.defaultBranch}` : null },
      h('input', {
        class: 'gl-form-input form-control',
        attrs: { id: 'duo-branch', placeholder: vm.project?.defaultBranch || 'main', autocomplete: 'off' },
        domProps: { value: vm.branch },
        on: { input: (event) => (vm.branch = event.target.value), change: () => vm.refreshIndex() },
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
            domProps: { checked: vm.contextMode === value },
            on: {
              change: () => {
                vm.contextMode = value;
                if (value === 'directory') vm.loadDirectories();
              },
            },
          }),
          h('label', { class: 'custom-control-label', attrs: { for: `duo-context-${value}` } }, label),
        ]),
      ),
    ]),
    vm.contextMode === 'directory'
      ? h('div', [
          field(
            h,
            { id: 'duo-directory-filter', label: 'Filter directories' },
            h('input', {
              class: 'gl-form-input form-control',
              attrs: { id: 'duo-directory-filter', type: 'search', autocomplete: 'off', placeholder: 'e.g. src/auth' },
              domProps: { value: vm.directorySearch },
              on: {
                input: (event) => {
                  vm.directorySearch = event.target.value;
                  clearTimeout(vm.directoryTimer);
                  vm.directoryTimer = setTimeout(() => vm.loadDirectories(), 250);
                },
              },
            }),
          ),
          field(
            h,
            {
              id: 'duo-directory',
              label: 'Directory',
              hint: vm.directories.length
                ? null
                : vm.directorySearch
                  ? 'No indexed directory matches.'
                  : 'Directories appear once the branch is indexed.',
            },
            h(
              'select',
              {
                class: 'gl-form-select custom-select',
                attrs: { id: 'duo-directory' },
                domProps: { value: vm.directory },
                on: { change: (event) => (vm.directory = event.target.value) },
              },
              [
                h('option', { attrs: { value: '' } }, 'Choose a directory'),
                // The chosen one stays listed when a filter leaves it out.
                ...[...new Set([...(vm.directory ? [vm.directory] : []), ...vm.directories])].map((directory) =>
                  h('option', { attrs: { value: directory }, domProps: { selected: directory === vm.directory } }, directory),
                ),
              ],
            ),
          ),
        ])
      : null,
    h(
      'section',
      {
        class: 'duo-field duo-index',
        attrs: { 'aria-labelledby': 'duo-index-title', 'aria-live': 'polite', 'data-testid': 'index-state' },
      },
      [
        h('h2', { class: 'gl-m-0 gl-mb-2 gl-text-base gl-font-bold', attrs: { id: 'duo-index-title' } }, 'Code index'),
        h('div', { class: 'gl-flex gl-items-center gl-gap-2' }, [
          h(GlBadge, { props: { variant: badgeVariant } }, state === 'NOT_INDEXED' ? 'not indexed' : state.toLowerCase()),
          index
            ? h(
                'span',
                { class: 'gl-text-sm gl-text-subtle', attrs: { 'data-testid': 'index-counts' } },
                indexing && index.filesTotal !== null && index.filesTotal !== undefined
                  ? `${index.filesIndexed} of ${index.filesTotal} files`
                  : `${index.filesIndexed} files, ${index.chunkCount} chunks`,
              )
            : null,
        ]),
        indexing
          ? h(GlProgressBar, {
              props: { value: vm.indexProgress },
              class: 'gl-mt-2',
              attrs: { 'aria-label': 'Indexing progress', 'aria-valuenow': vm.indexProgress, 'aria-valuemin': 0, 'aria-valuemax': 100 },
            })
          : null,
        index?.lastError ? h('p', { class: 'gl-mb-0 gl-mt-2 gl-text-sm gl-text-danger' }, index.lastError) : null,
        vm.indexMessage ? h('p', { class: 'gl-mb-0 gl-mt-2 gl-text-sm gl-text-danger', attrs: { role: 'alert' } }, vm.indexMessage) : null,
        vm.project
          ? h(
              GlButton,
              {
                props: { size: 'small', loading: vm.indexRequesting, disabled: indexing },
                class: 'gl-mt-3',
                attrs: { 'data-testid': 'index-button' },
                on: { click: vm.requestIndex },
              },
              index ? 'Update the index' : 'Index this branch',
            )
          : null,
      ],
    ),
    h('nav', { class: 'duo-field duo-threads', attrs: { 'aria-labelledby': 'duo-threads-title' } }, [
      h('div', { class: 'gl-flex gl-items-center' }, [
        h('h2', { class: 'gl-m-0 gl-text-base gl-font-bold', attrs: { id: 'duo-threads-title' } }, 'Conversations'),
        h(
          GlButton,
          {
            props: { size: 'small', icon: 'plus', category: 'tertiary' },
            class: 'gl-ml-auto',
            attrs: { 'data-testid': 'new-chat' },
            on: { click: vm.newChat },
          },
          'New',
        ),
      ]),
      h(
        'ul',
        { class: 'gl-m-0 gl-list-none gl-p-0' },
        vm.threads.map((thread) =>
          h('li', { key: thread.id }, [
            h(
              'button',
              {
                class: { 'duo-thread': true, 'is-active': thread.id === vm.threadId },
                attrs: { type: 'button', 'aria-current': thread.id === vm.threadId ? 'true' : null },
                on: { click: () => vm.openThread(thread) },
              },
              thread.title || 'Untitled conversation',
            ),
          ]),
        ),
      ),
    ]),
  ]);
}

export function renderChat(h, vm) {
  const suggestions = vm.suggestions;
  return h('main', { class: 'duo-chat-main', attrs: { 'aria-label': 'Duo Chat' } }, [
    vm.chatError
      ? h(
          GlAlert,
          {
            props: { variant: 'danger' },
            attrs: { role: 'alert', 'data-testid': 'chat-error' },
            on: { dismiss: () => (vm.chatError = '') },
          },
          vm.chatError,
        )
      : null,
    h(DuoChat, {
      props: {
        title: 'GitLab Duo Chat',
        messages: vm.messages,
        isLoading: vm.isLoading,
        canceledRequestIds: vm.canceledRequestIds,
        slashCommands: SLASH_COMMANDS,
        predefinedPrompts: [
          'Where is the push webhook token checked?',
          'How is the code index built?',
          'Explain how this project is structured',
        ],
        showHeader: false,
        badgeType: null,
        chatPromptPlaceholder: vm.project ? `Ask about ${vm.project.fullPath}…` : 'Ask GitLab Duo…',
      },
      on: {
        'send-chat-prompt': vm.send,
        'chat-cancel': vm.cancel,
        'track-feedback': vm.sendFeedback,
        'new-chat': vm.newChat,
      },
    }),
    suggestions && suggestions.prompts.length
      ? h(
          'div',
          { class: 'duo-suggestions', attrs: { role: 'group', 'aria-label': suggestions.label, 'data-testid': 'gatekeeper-suggestions' } },
          [
            h('span', { class: 'gl-text-sm gl-text-subtle' }, `${suggestions.label}:`),
            ...suggestions.prompts.map((prompt) => h(GlButton, { props: { size: 'small' }, on: { click: () => vm.send(prompt) } }, prompt)),
          ],
        )
      : null,
  ]);
}
