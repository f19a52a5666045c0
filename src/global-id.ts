// GitLab's global ids (`gid://gitlab/<model>/<id>`): plain functions every layer may use.
/** A parsed GitLab global id, `gid://gitlab/<model>/<id>`. */
export type GlobalId = { model: string; id: string };

const GID = /^gid:\/\/gitlab\/([A-Za-z][A-Za-z0-9:]*)\/([A-Za-z0-9-]+)$/;

export function toGlobalId(model: string, id: number | string): string {
  return `gid://gitlab/${model}/${id}`;
}

export function parseGlobalId(value: string): GlobalId | null {
  const match = GID.exec(value);
  return match ? { model: match[1], id: match[2] } : null;
}

/** The largest id an integer (int4) primary key holds: a larger number names no row. */
const MAX_ROW_ID = 2_147_483_647;

/** A row id written in decimal digits, or null when the text is not one or no row can have it (beyond int4). */
export function rowId(text: string): number | null {
  if (!/^\d{1,10}$/.test(text)) return null;
  const id = Number(text);
  return id <= MAX_ROW_ID ? id : null;
}

/** The numeric id of a gid for a model with integer ids, or null (also when no row can have it). */
export function numericId(globalId: GlobalId): number | null {
  return rowId(globalId.id);
}

/** The numeric id of a gid naming one model (`gid://gitlab/Project/7` for "Project"), or null. */
export function numericIdOf(model: string, value: string): number | null {
  const parsed = parseGlobalId(value);
  return parsed && parsed.model === model ? numericId(parsed) : null;
}
