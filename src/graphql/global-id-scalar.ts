import { GraphQLError, GraphQLScalarType, Kind } from 'graphql';
import { parseGlobalId, toGlobalId, type GlobalId } from '../global-id';

export type GlobalIdScalarOptions = {
  name: string;
  /** The model the id must name; null accepts any model (GitLab's AiModelID). */
  model: string | null;
  /** Models that are kinds of it, also accepted (GitLab's GlobalIDType takes a subclass: a Group is a Namespace). */
  kinds?: readonly string[];
  description: string;
};

/** One of GitLab's typed id scalars (UserID, ProjectID, ...): strings on the wire, GlobalId inside. */
export function globalIdScalar(options: GlobalIdScalarOptions): GraphQLScalarType<GlobalId, string> {
  const parse = (value: unknown): GlobalId => {
    if (typeof value !== 'string') throw new GraphQLError(`${options.name} must be a string`, { extensions: { code: 'BAD_USER_INPUT' } });
    const parsed = parseGlobalId(value);
    if (!parsed) throw new GraphQLError(`"${value}" is not a valid Global ID`, { extensions: { code: 'BAD_USER_INPUT' } });
    if (options.model && parsed.model !== options.model && !options.kinds?.includes(parsed.model)) {
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
