import { Field, ID, ObjectType } from 'type-graphql';

@ObjectType('Project')
export class ProjectType {
  @Field(() => ID, { description: 'ID of the project.' })
  id!: string;

  @Field(() => ID, { description: 'Full path of the project.' })
  fullPath!: string;

  @Field({ description: 'Name of the project without the namespace.' })
  name!: string;

  @Field(() => String, { nullable: true, description: 'Short description of the project.' })
  description!: string | null;

  @Field(() => String, { nullable: true, description: 'Default branch of the repository.' })
  defaultBranch!: string | null;

  @Field(() => Boolean, { nullable: true, description: 'Indicates whether GitLab Duo features are enabled for the project.' })
  duoFeaturesEnabled!: boolean | null;

  @Field(() => String, { description: 'Visibility of the project: private, internal or public.' })
  visibility!: string;

  /** The namespace the project lives in (not a field: `group` resolves it). */
  groupId!: number;

  /** GitLab's `web_url` of a project mirrored from GitLab (not a field: `webUrl` resolves it). */
  gitlabWebUrl?: string | null;
}

const can = (ability: string) => `If \`true\`, the user can perform \`${ability}\` on this resource`;

@ObjectType('ProjectPermissions')
export class ProjectPermissionsType {
  @Field({ description: can('read_project') })
  readProject!: boolean;

  @Field({ description: can('download_code') })
  downloadCode!: boolean;

  @Field({ description: can('push_code') })
  pushCode!: boolean;

  @Field({ description: can('admin_project') })
  adminProject!: boolean;

  @Field({ description: can('remove_project') })
  removeProject!: boolean;

  @Field({ description: `${can('read_ai_catalog_item')}. Always false here: there is no AI catalog.` })
  readAiCatalogItem!: boolean;

  @Field({ description: `${can('admin_ai_catalog_item')}. Always false here: there is no AI catalog.` })
  adminAiCatalogItem!: boolean;
}
