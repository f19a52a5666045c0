-- duo-slice initial schema. Kept in step with prisma/schema.prisma (checked by test/db/schema-drift.test.ts).
CREATE EXTENSION IF NOT EXISTS vector;

CREATE TYPE "user_state" AS ENUM ('active', 'blocked');
CREATE TYPE "group_plan" AS ENUM ('free', 'premium', 'ultimate');
CREATE TYPE "add_on_name" AS ENUM ('duo_pro', 'duo_enterprise');
CREATE TYPE "project_visibility" AS ENUM ('private', 'internal', 'public');
CREATE TYPE "ai_conversation_type" AS ENUM ('duo_chat_legacy', 'duo_code_review', 'duo_quick_chat', 'duo_chat');
CREATE TYPE "ai_message_role" AS ENUM ('user', 'assistant', 'system');

CREATE TABLE "users" (
    "id" SERIAL PRIMARY KEY,
    "username" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "email" TEXT NOT NULL,
    "admin" BOOLEAN NOT NULL DEFAULT false,
    "state" "user_state" NOT NULL DEFAULT 'active',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE UNIQUE INDEX "users_username_key" ON "users"("username");
CREATE UNIQUE INDEX "users_email_key" ON "users"("email");

CREATE TABLE "personal_access_tokens" (
    "id" SERIAL PRIMARY KEY,
    "user_id" INTEGER NOT NULL REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    "name" TEXT NOT NULL,
    "token_digest" TEXT NOT NULL,
    "scopes" TEXT[],
    "expires_at" DATE,
    "revoked_at" TIMESTAMPTZ(3),
    "last_used_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE UNIQUE INDEX "personal_access_tokens_token_digest_key" ON "personal_access_tokens"("token_digest");
CREATE INDEX "personal_access_tokens_user_id_idx" ON "personal_access_tokens"("user_id");

CREATE TABLE "groups" (
    "id" SERIAL PRIMARY KEY,
    "parent_id" INTEGER REFERENCES "groups"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    "path" TEXT NOT NULL,
    "full_path" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "plan" "group_plan" NOT NULL DEFAULT 'free',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE UNIQUE INDEX "groups_full_path_key" ON "groups"("full_path");

CREATE TABLE "add_on_purchases" (
    "id" SERIAL PRIMARY KEY,
    "group_id" INTEGER NOT NULL REFERENCES "groups"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    "add_on" "add_on_name" NOT NULL,
    "seat_count" INTEGER NOT NULL,
    "starts_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE UNIQUE INDEX "add_on_purchases_group_id_add_on_key" ON "add_on_purchases"("group_id", "add_on");

CREATE TABLE "seat_assignments" (
    "id" SERIAL PRIMARY KEY,
    "purchase_id" INTEGER NOT NULL REFERENCES "add_on_purchases"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    "user_id" INTEGER NOT NULL REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE UNIQUE INDEX "seat_assignments_purchase_id_user_id_key" ON "seat_assignments"("purchase_id", "user_id");
CREATE INDEX "seat_assignments_user_id_idx" ON "seat_assignments"("user_id");

CREATE TABLE "projects" (
    "id" SERIAL PRIMARY KEY,
    "group_id" INTEGER NOT NULL REFERENCES "groups"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    "path" TEXT NOT NULL,
    "full_path" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "default_branch" TEXT NOT NULL DEFAULT 'main',
    "visibility" "project_visibility" NOT NULL DEFAULT 'private',
    "duo_features_enabled" BOOLEAN NOT NULL DEFAULT true,
    "repository_url" TEXT,
    "webhook_secret_digest" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE UNIQUE INDEX "projects_full_path_key" ON "projects"("full_path");
CREATE UNIQUE INDEX "projects_group_id_path_key" ON "projects"("group_id", "path");

CREATE TABLE "group_members" (
    "id" SERIAL PRIMARY KEY,
    "group_id" INTEGER NOT NULL REFERENCES "groups"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    "user_id" INTEGER NOT NULL REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    "access_level" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE UNIQUE INDEX "group_members_group_id_user_id_key" ON "group_members"("group_id", "user_id");
CREATE INDEX "group_members_user_id_idx" ON "group_members"("user_id");

CREATE TABLE "project_members" (
    "id" SERIAL PRIMARY KEY,
    "project_id" INTEGER NOT NULL REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    "user_id" INTEGER NOT NULL REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    "access_level" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE UNIQUE INDEX "project_members_project_id_user_id_key" ON "project_members"("project_id", "user_id");
CREATE INDEX "project_members_user_id_idx" ON "project_members"("user_id");

CREATE TABLE "ai_conversation_threads" (
    "id" SERIAL PRIMARY KEY,
    "user_id" INTEGER NOT NULL REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    "conversation_type" "ai_conversation_type" NOT NULL,
    "title" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE INDEX "ai_conversation_threads_user_id_conversation_type_last_updated_at_idx"
    ON "ai_conversation_threads"("user_id", "conversation_type", "last_updated_at" DESC);

CREATE TABLE "ai_messages" (
    "id" UUID PRIMARY KEY,
    "user_id" INTEGER NOT NULL REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    "thread_id" INTEGER REFERENCES "ai_conversation_threads"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    "request_id" UUID NOT NULL,
    "role" "ai_message_role" NOT NULL,
    "content" TEXT NOT NULL,
    "errors" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "extras" JSONB NOT NULL DEFAULT '{}',
    "ai_action" TEXT NOT NULL DEFAULT 'chat',
    "client_subscription_id" TEXT,
    "platform_origin" TEXT,
    "agent_version_id" TEXT,
    "resource_id" TEXT,
    "project_id" INTEGER,
    "has_feedback" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE INDEX "ai_messages_user_id_thread_id_created_at_idx" ON "ai_messages"("user_id", "thread_id", "created_at");
CREATE INDEX "ai_messages_user_id_request_id_idx" ON "ai_messages"("user_id", "request_id");

CREATE TABLE "ai_message_context_items" (
    "id" SERIAL PRIMARY KEY,
    "message_id" UUID NOT NULL REFERENCES "ai_messages"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    "position" INTEGER NOT NULL,
    "item_id" TEXT NOT NULL,
    "category" TEXT NOT NULL,
    "content" TEXT NOT NULL,
    "metadata" JSONB
);
CREATE UNIQUE INDEX "ai_message_context_items_message_id_position_key" ON "ai_message_context_items"("message_id", "position");

CREATE TABLE "ai_message_feedback" (
    "id" SERIAL PRIMARY KEY,
    "message_id" UUID NOT NULL REFERENCES "ai_messages"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    "user_id" INTEGER NOT NULL REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    "event" TEXT NOT NULL,
    "details" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE INDEX "ai_message_feedback_message_id_idx" ON "ai_message_feedback"("message_id");
CREATE INDEX "ai_message_feedback_user_id_created_at_idx" ON "ai_message_feedback"("user_id", "created_at");
