import { NamespaceID, ProjectID } from '../../src/graphql/scalars';

describe('typed global ids', () => {
  it("NamespaceID takes any kind of namespace, as GitLab's GlobalIDType[::Namespace] does, and nothing else", () => {
    expect(
      ['Namespace', 'Group', 'Namespaces::UserNamespace', 'Namespaces::ProjectNamespace'].map((model) =>
        NamespaceID.parseValue(`gid://gitlab/${model}/7`),
      ),
    ).toEqual([
      { model: 'Namespace', id: '7' },
      { model: 'Group', id: '7' },
      { model: 'Namespaces::UserNamespace', id: '7' },
      { model: 'Namespaces::ProjectNamespace', id: '7' },
    ]);
    expect(() => NamespaceID.parseValue('gid://gitlab/Project/7')).toThrow(
      '"gid://gitlab/Project/7" does not represent an instance of Namespace',
    );
  });

  it('ProjectID takes a project only', () => {
    expect(() => ProjectID.parseValue('gid://gitlab/Group/7')).toThrow('does not represent an instance of Project');
  });
});
