import { GraphQLInt, GraphQLList, GraphQLObjectType, GraphQLSchema, GraphQLString, parse } from 'graphql';
import { operationCost } from '../../src/graphql/operation-cost';

const item = new GraphQLObjectType({ name: 'Item', fields: { name: { type: GraphQLString } } });

function schemaWith(complexity?: (options: { args: { first?: number } }) => number) {
  const query = new GraphQLObjectType({
    name: 'Query',
    fields: {
      items: {
        type: new GraphQLList(item),
        args: { first: { type: GraphQLInt } },
        extensions: complexity ? { complexity } : {},
      },
    },
  });
  return new GraphQLSchema({ query });
}

describe('operationCost', () => {
  it('follows the variables on every request when a field costs what its arguments ask for', () => {
    const schema = schemaWith(({ args }) => args.first ?? 1);
    const document = parse('query($n: Int) { items(first: $n) { name } }');
    const cost = (n: number) => operationCost({ schema, document, operationName: undefined, variables: { n } });
    expect([cost(10), cost(500), cost(10)]).toEqual([10, 500, 10]);
  });

  it('gives a fixed cost once per document, per operation', () => {
    const schema = schemaWith();
    const document = parse('query A { items { name } } query B { items { name } b: items { name } }');
    const cost = (operationName: string) => operationCost({ schema, document, operationName, variables: {} });
    expect([cost('A'), cost('B'), cost('A'), cost('B')]).toEqual([2, 4, 2, 4]);
  });
});
