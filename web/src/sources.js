// Citations: an answer's extras.sources (GitLab's shape for code, from the Semantic Search Tool)
// as the links duo-ui's message shows, pointing at the page's own file view.

/** The hash that opens the file view at a file's lines. */
export function fileHash({ projectPath, ref, path, startLine, endLine }) {
  const params = new URLSearchParams({ project: projectPath, path });
  if (ref) params.set('ref', ref);
  if (startLine) params.set('lines', endLine && endLine !== startLine ? `${startLine}-${endLine}` : String(startLine));
  return `#file?${params.toString()}`;
}

/**
 * The file view's hash for a GitLab blob URL the service redirected here (`?project=&ref=&path=`,
 * with GitLab's line anchor `#L10` or `#L10-20` kept by the browser), or null when the page was
 * opened otherwise.
 */
export function blobLinkHash(search, hash) {
  const params = new URLSearchParams(search);
  const projectPath = params.get('project');
  const path = params.get('path');
  if (!projectPath || !path) return null;
  const lines = /^#L(\d+)(?:-L?(\d+))?$/.exec(hash);
  const startLine = lines ? Number.parseInt(lines[1], 10) : null;
  const endLine = lines?.[2] ? Number.parseInt(lines[2], 10) : startLine;
  return fileHash({ projectPath, ref: params.get('ref'), path, startLine, endLine });
}

/** The file view a hash asks for, or null. */
export function parseFileHash(hash) {
  if (!hash.startsWith('#file?')) return null;
  const params = new URLSearchParams(hash.slice('#file?'.length));
  const project = params.get('project');
  const path = params.get('path');
  if (!project || !path) return null;
  const [start, end] = (params.get('lines') || '').split('-').map((part) => Number.parseInt(part, 10));
  return {
    project,
    path,
    ref: params.get('ref') || null,
    startLine: Number.isFinite(start) ? start : null,
    endLine: Number.isFinite(end) ? end : Number.isFinite(start) ? start : null,
  };
}

/** duo-ui's sources ({ title, source_url }) from ours; anything not a code source is left out. */
export function toDisplaySources(sources) {
  if (!Array.isArray(sources)) return [];
  return sources
    .filter((source) => source && typeof source.path === 'string' && typeof source.projectPath === 'string')
    .map((source) => ({
      title: source.startLine ? `${source.path}:${source.startLine}-${source.endLine ?? source.startLine}` : source.path,
      source_url: fileHash(source),
    }));
}
