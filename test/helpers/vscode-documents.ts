/**
 * The documents VS Code's GitLab Workflow sends besides Duo, as it writes them, and its User-Agent: what connected
 * mode passes on to GitLab (test/http/gitlab-pass-through.e2e.test.ts, test/gitlab/connected-done-when.e2e.test.ts).
 */
// The documents VS Code's GitLab Workflow sends, as it writes them: gitlab-org/gitlab-vscode-extension 3.x,
// src/gitlab/gitlab_new_service.ts and src/gitlab/graphql/*.ts (read from its mirror knkgun/gitlab-vscode-extension
// at f3265e2cf3c00d9ff8f06125e1ba44e7693970e3); its REST paths from src/gitlab_service.ts there.
const fragmentProjectDetails = `
  fragment projectDetails on Project {
    id
    name
    description
    httpUrlToRepo
    sshUrlToRepo
    fullPath
    webUrl
    group {
      id
    }
  }
`;
export const queryGetProject = `
  ${fragmentProjectDetails}
  query GetProject($projectPath: ID!) {
    project(fullPath: $projectPath) {
      ...projectDetails
    }
  }
`;
const positionFragment = `
  fragment position on Note {
    position {
      diffRefs {
        baseSha
        headSha
      }
      filePath
      positionType
      newLine
      oldLine
      newPath
      oldPath
      positionType
    }
  }
`;
const discussionsFragment = `
  ${positionFragment}
  fragment discussions on DiscussionConnection {
    pageInfo {
      hasNextPage
      endCursor
    }
    nodes {
      replyId
      createdAt
      resolved
      resolvable
      notes {
        pageInfo {
          hasNextPage
          endCursor
        }
        nodes {
          id
          createdAt
          system
          author {
            avatarUrl
            name
            username
            webUrl
          }
          body
          bodyHtml
          userPermissions {
            resolveNote
            adminNote
            createNote
          }
          ...position
        }
      }
    }
  }
`;
export const getMrDiscussionsQuery = `
  ${discussionsFragment}
  query GetMrDiscussions($projectPath: ID!, $iid: String!, $afterCursor: String) {
    project(fullPath: $projectPath) {
      id
      mergeRequest(iid: $iid) {
        discussions(after: $afterCursor) {
          ...discussions
        }
      }
    }
  }
`;
export const createNoteMutation = `
  mutation CreateNote($issuableId: NoteableID!, $body: String!, $replyId: DiscussionID) {
    createNote(input: { noteableId: $issuableId, body: $body, discussionId: $replyId }) {
      errors
    }
  }
`;

export const VS_CODE_USER_AGENT = 'vs-code-gitlab-workflow/3.47.1 VSCode/1.96.0 Node.js/20.18.1 (darwin; arm64)';
