-- Connected mode (GITLAB_URL): users, namespaces and projects mirrored from GitLab the first time they are
-- seen, keyed by GitLab's ids (a mirrored row's own id is GitLab's as well). Local rows keep null.
ALTER TABLE "users" ADD COLUMN "gitlab_user_id" INTEGER;
CREATE UNIQUE INDEX "users_gitlab_user_id_key" ON "users"("gitlab_user_id");

ALTER TABLE "groups" ADD COLUMN "gitlab_namespace_id" INTEGER;
CREATE UNIQUE INDEX "groups_gitlab_namespace_id_key" ON "groups"("gitlab_namespace_id");

ALTER TABLE "projects" ADD COLUMN "gitlab_project_id" INTEGER;
ALTER TABLE "projects" ADD COLUMN "web_url" TEXT;
CREATE UNIQUE INDEX "projects_gitlab_project_id_key" ON "projects"("gitlab_project_id");
