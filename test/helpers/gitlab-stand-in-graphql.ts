/**
 * The GitLab stand-in's POST /api/graphql: documents are validated and executed against GitLab's own type
 * definitions for the fields VS Code's GitLab Workflow selects (test/fixtures/gitlab-graphql/gitlab-subset.graphql),
 * over the stand-in's projects, merge requests and notes. A document GitLab would refuse is refused here too.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { buildSchema, graphqlSync, type ExecutionResult, type GraphQLSchema } from 'graphql';
import type { StandInGroup, StandInMergeRequest, StandInProject, StandInUser } from './gitlab-stand-in';

/** What the GraphQL answers are read from: the stand-in's state. */
export type StandInGraphQLData = {
  origin(): string;
  findProject(fullPath: string): StandInProject | null;
  findProjectById(id: number): StandInProject | null;
  canSee(project: StandInProject, user: StandInUser | null): boolean;
  projectFullPath(project: StandInProject): string;
  groupOf(project: StandInProject): StandInGroup | null;
  groupFullPath(group: StandInGroup): string;
  user(id: number): StandInUser | null;
  mergeRequests(): StandInMergeRequest[];
  addNote(mergeRequest: StandInMergeRequest, author: StandInUser, body: string): { id: number };
  /** GET /api/v4/metadata's answer: GraphQL's `metadata` is the same entity. */
  metadata(): { version: string; revision: string; kas: { enabled: boolean; externalUrl: string; version: string }; enterprise: boolean };
  /** Whether an instance feature flag is on (`setFeatureFlag`). */
  featureFlagEnabled(name: string): boolean;
};

let schema: GraphQLSchema | null = null;
const gitlabSchema = () =>
  (schema ??= buildSchema(readFileSync(path.join(__dirname, '..', 'fixtures', 'gitlab-graphql', 'gitlab-subset.graphql'), 'utf8')));

const escapeHtml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const page = { endCursor: null, hasNextPage: false, hasPreviousPage: false, startCursor: null };

export function executeStandInGraphQL(
  data: StandInGraphQLData,
  request: { query?: unknown; variables?: unknown; operationName?: unknown; viewer: StandInUser | null; canWrite: boolean },
): ExecutionResult {
  const { viewer } = request;
  const userCore = (user: StandInUser) => ({
    id: `gid://gitlab/User/${user.id}`,
    avatarUrl: `/uploads/-/system/user/avatar/${user.id}/avatar.png`,
    name: user.name,
    username: user.username,
    webUrl: `${data.origin()}/${user.username}`,
  });
  const noteJson = (note: StandInMergeRequest['notes'][number]) => ({
    id: `gid://gitlab/Note/${note.id}`,
    createdAt: note.createdAt.toISOString(),
    system: false,
    author: data.user(note.authorId) ? userCore(data.user(note.authorId)!) : null,
    body: note.body,
    bodyHtml: `<p data-sourcepos="1:1-1:${note.body.length}" dir="auto">${escapeHtml(note.body)}</p>`,
    userPermissions: { adminNote: viewer?.id === note.authorId, createNote: Boolean(viewer), resolveNote: Boolean(viewer) },
    position: null,
  });
  const mergeRequestJson = (project: StandInProject, mergeRequest: StandInMergeRequest) => ({
    id: `gid://gitlab/MergeRequest/${mergeRequest.id}`,
    iid: String(mergeRequest.iid),
    title: mergeRequest.title,
    webUrl: `${data.origin()}/${data.projectFullPath(project)}/-/merge_requests/${mergeRequest.iid}`,
    discussions: () => ({
      pageInfo: page,
      nodes: mergeRequest.notes.map((note) => ({
        id: `gid://gitlab/Discussion/${note.discussionId}`,
        replyId: `gid://gitlab/Discussion/${note.discussionId}`,
        createdAt: note.createdAt.toISOString(),
        resolved: false,
        resolvable: true,
        notes: () => ({ pageInfo: page, nodes: [noteJson(note)] }),
      })),
    }),
  });
  const rootValue = {
    // GitLab answers every name asked for, false for a flag it does not have on.
    metadata: () => ({
      ...data.metadata(),
      featureFlags: ({ names }: { names: string[] }) => names.map((name) => ({ name, enabled: data.featureFlagEnabled(name) })),
    }),
    project: ({ fullPath }: { fullPath: string }) => {
      const project = data.findProject(fullPath);
      if (!project || !data.canSee(project, viewer)) return null;
      const fullPathOf = data.projectFullPath(project);
      const group = data.groupOf(project);
      return {
        id: `gid://gitlab/Project/${project.id}`,
        name: project.name,
        description: null,
        fullPath: fullPathOf,
        httpUrlToRepo: `${data.origin()}/${fullPathOf}.git`,
        sshUrlToRepo: `git@${new URL(data.origin()).host}:${fullPathOf}.git`,
        webUrl: `${data.origin()}/${fullPathOf}`,
        group: group ? { id: `gid://gitlab/Group/${group.id}`, fullPath: data.groupFullPath(group) } : null,
        mergeRequest: ({ iid }: { iid: string }) => {
          const found = data.mergeRequests().find((each) => each.projectId === project.id && String(each.iid) === iid);
          return found ? mergeRequestJson(project, found) : null;
        },
      };
    },
    createNote: ({ input }: { input: { noteableId: string; body: string } }) => {
      if (!viewer || !request.canWrite)
        return { errors: ["The resource that you are attempting to access does not exist or you don't have permission"], note: null };
      const id = /^gid:\/\/gitlab\/MergeRequest\/(\d+)$/.exec(input.noteableId)?.[1];
      const mergeRequest = data.mergeRequests().find((each) => String(each.id) === id);
      const project = mergeRequest ? data.findProjectById(mergeRequest.projectId) : null;
      if (!mergeRequest || !project || !data.canSee(project, viewer))
        return { errors: ["The resource that you are attempting to access does not exist or you don't have permission"], note: null };
      data.addNote(mergeRequest, viewer, input.body);
      return { errors: [], note: noteJson(mergeRequest.notes.at(-1)!) };
    },
  };
  // As JSON, the way it goes out: GraphQLError objects become their {message, locations, path}.
  const result = graphqlSync({
    schema: gitlabSchema(),
    source: typeof request.query === 'string' ? request.query : '',
    rootValue,
    variableValues: request.variables && typeof request.variables === 'object' ? (request.variables as Record<string, unknown>) : undefined,
    operationName: typeof request.operationName === 'string' ? request.operationName : undefined,
  });
  return JSON.parse(JSON.stringify(result)) as ExecutionResult;
}
