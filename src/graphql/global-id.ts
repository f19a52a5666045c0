import { GraphQLError, GraphQLScalarType, Kind } from 'graphql';

/** A parsed GitLab global id, `gid://gitlab/<model>/<id>`. */
export type GlobalId = { model: string; id: string };

const GID = /^gid:\/\/gitlab\/([A-Za-z][A-Za-z0-9:]*)\/([A-Za-z0-9-]+)$/;

export function toGlobalId(model: string, id: number | string): string {
  return `gid://gitlab/${model}/${id}`;
}

export function parseGlobalId(value: string): GlobalId | null {
  const match = GID.exec(value);
  return match ? { model: match[1]!, id: match[2]! } : null;
}

/** The numeric id of a gid for a model with integer ids, or null. */
export function numericId(globalId: GlobalId): number | null {
  return /^\d+$/.test(globalId.id) && globalId.id.length < 16 ? Number(globalId.id) : null;
}

export type GlobalIdScalarOptions = {
  name: string;
  /** The model the id must name; null accepts any model (GitLab's AiModelID). */
  model: string | null;
  description: string;
};

/** One of GitLab's typed id scalars (UserID, ProjectID, ...): strings on the wire, GlobalId inside. */
export function globalIdScalar(options: GlobalIdScalarOptions): GraphQLScalarType<GlobalId, string> {
  const parse = (value: unknown): GlobalId => {
    if (typeof value !== 'string') throw new GraphQLError(`${options.name} must be a string`, { extensions: { code: 'BAD_USER_INPUT' } });
    const parsed = parseGlobalId(value);
    if (!parsed) throw new GraphQLError(`"${value}" is not a valid Global ID`, { extensions: { code: 'BAD_USER_INPUT' } });
    if (options.model && parsed.model !== options.model) {
      throw new GraphQLError(`"${value}" does not represent an instance of ${options.model}`, { extensions: { code: 'BAD_USER_INPUT' } });
    }
    return parsed;
  };
  return new GraphQLScalarType<GlobalId, string>({
    name: options.name,
    description: options.description,
    serialize: (value) => {
      if (typeof value === 'string') return value;
      const globalId = value as GlobalId;
      return toGlobalId(globalId.model, globalId.id);
    },
    parseValue: parse,
    parseLiteral: (ast) => {
      if (ast.kind !== Kind.STRING) throw new GraphQLError(`${options.name} must be a string`, { extensions: { code: 'BAD_USER_INPUT' } });
      return parse(ast.value);
    },
  });
}
