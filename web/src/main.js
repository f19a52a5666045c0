// The Duo Chat page: GitLab's own Duo Chat component (@gitlab/duo-ui) on duo-slice's public API.
import Vue from 'vue';
import { GlButton } from '@gitlab/ui';
import '@gitlab/ui/dist/index.css';
import '@gitlab/ui/dist/tailwind.css';
import '@gitlab/duo-ui/dist/components.css';
import '@gitlab/duo-ui/dist/tailwind.css';
import 'highlight.js/styles/github.css';
import './page.css';
import { ApiError, createApi, QUERIES } from './api';
import { applyEvent, gatekeeperSuggestions, toChatMessage } from './chat-state';
import { FileView } from './file-view';
import { blobLinkHash, parseFileHash } from './sources';
import { renderChat, renderSettings, renderSignIn } from './views';

const TOKEN_KEY = 'duo-slice-chat-token';
const INDEX_POLL_MS = 1500;

function signInMessage(error) {
  if (error instanceof ApiError && (error.status === 401 || error.code === 'UNAUTHENTICATED')) {
    return (
      'This token was not accepted: it is wrong, expired or revoked (or its user is blocked). Create a new personal access token ' +
      'and try again.'
    );
  }
  return `Could not sign in: ${error.message}`;
}

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
    // Until the list arrives the picker says so, rather than that there is nothing to pick.
    projectsLoaded: false,
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
      if (!this.index.filesTotal) return 0;
      return Math.min(100, Math.round((this.index.filesIndexed / this.index.filesTotal) * 100));
    },
    // A question with the branch's code as context starts its first index (the answer waits for it):
    // the panel follows that run from the moment the question is sent.
    awaitsIndex() {
      return Boolean(this.pendingRequestId) && this.contextMode !== 'none' && this.index?.state !== 'READY';
    },
  },
  created() {
    this.chunks = new Map();
    // Not reactive: bookkeeping for events that arrive while a question is being sent.
    this.sending = false;
    this.early = [];
    window.addEventListener('hashchange', this.onHashChange);
    // A GitLab blob URL (a search result's file_url) lands here as ?project=&ref=&path= and #L10-20: the file view's own hash.
    const blob = blobLinkHash(window.location.search, window.location.hash);
    if (blob) window.history.replaceState(null, '', window.location.pathname + blob);
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
      Object.assign(this.$data, {
        token: '',
        user: null,
        api: null,
        projects: [],
        projectsLoaded: false,
        projectPath: '',
        messages: [],
        threads: [],
        threadId: null,
        index: null,
        fileTarget: null,
        pendingRequestId: null,
        signInError: '',
      });
      window.location.hash = '';
    },
    /** The token stopped working while signed in: back to sign-in, saying why. */
    endSession() {
      this.signOut();
      this.signInError =
        'Your session ended: the token is no longer accepted (it was revoked or has expired). Sign in with a valid personal access token.';
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
            this.chatError =
              error instanceof ApiError && error.code === 'UNAUTHENTICATED'
                ? signInMessage(error)
                : `Live answers stopped: ${error.message}`;
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
      this.projectsLoaded = true;
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
        // Faster while an answer waits for the run: the user is watching it.
        if ((this.index && ['PENDING', 'INDEXING'].includes(this.index.state)) || this.awaitsIndex)
          this.indexTimer = setTimeout(() => this.refreshIndex(), this.awaitsIndex ? INDEX_POLL_MS / 3 : INDEX_POLL_MS);
        if (this.index?.state === 'READY' && this.contextMode === 'directory') this.loadDirectories();
      } catch (error) {
        this.indexMessage = error.message;
      }
    },
    async loadDirectories() {
      try {
        const data = await this.api.graphql(QUERIES.directories, {
          fullPath: this.projectPath,
          ref: this.ref,
          search: this.directorySearch.trim() || null,
        });
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
        if (this.awaitsIndex) this.refreshIndex();
      } catch (error) {
        this.pendingRequestId = null;
        this.chatError = error.message;
      } finally {
        // duo-ui re-enables its submit button when isLoading turns false: let it see it turn true first.
        await this.$nextTick();
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
              extra: {
                improveWhat: event.improveWhat || event.extendedTextFeedback || null,
                didWhat: event.didWhat || null,
                promptLocation: 'after_content',
              },
            },
          },
        });
        this.messages = this.messages.map((existing) =>
          existing.id === message.id ? { ...existing, extras: { ...existing.extras, hasFeedback: true } } : existing,
        );
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
    if (!this.user) return renderSignIn(h, this);
    return h('div', { class: 'duo-page' }, [
      h('header', { class: 'duo-topbar' }, [
        h('h1', { class: 'gl-m-0 gl-text-lg' }, 'GitLab Duo Chat'),
        h('span', { class: 'gl-ml-auto gl-text-sm', attrs: { 'data-testid': 'signed-in-as' } }, `Signed in as ${this.user.username}`),
        h(GlButton, { props: { size: 'small' }, attrs: { 'data-testid': 'sign-out' }, on: { click: this.signOut } }, 'Sign out'),
      ]),
      h('div', { class: 'duo-body' }, [
        renderSettings(h, this),
        renderChat(h, this),
        this.fileTarget ? h(FileView, { props: { target: this.fileTarget, api: this.api }, on: { close: this.closeFile } }) : null,
      ]),
    ]);
  },
};

new Vue({ el: '#app', render: (h) => h(App) });
