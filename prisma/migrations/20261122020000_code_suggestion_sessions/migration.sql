-- Continuous code suggestions: a session holds the latest state of one document while the user
-- types; each complete suggestion is kept with the document state it was made for, so feedback
-- on it (accepted, rejected with what the user wrote instead, executed) can be learned from.
CREATE TABLE "code_suggestion_sessions" (
    "id" UUID NOT NULL,
    "user_id" INTEGER NOT NULL,
    "file_name" TEXT NOT NULL,
    "project_path" TEXT,
    "content" TEXT NOT NULL,
    "cursor_offset" INTEGER NOT NULL,
    "revision" INTEGER NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_active_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "code_suggestion_sessions_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "code_suggestion_sessions_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE INDEX "code_suggestion_sessions_user_id_idx" ON "code_suggestion_sessions"("user_id");

CREATE TABLE "code_suggestions" (
    "id" UUID NOT NULL,
    "session_id" UUID NOT NULL,
    "revision" INTEGER NOT NULL,
    "content" TEXT NOT NULL,
    "cursor_offset" INTEGER NOT NULL,
    "language" TEXT,
    "intent" TEXT NOT NULL,
    "generation_type" TEXT,
    "text" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "code_suggestions_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "code_suggestions_session_id_fkey" FOREIGN KEY ("session_id") REFERENCES "code_suggestion_sessions"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE INDEX "code_suggestions_session_id_idx" ON "code_suggestions"("session_id");
CREATE INDEX "code_suggestions_created_at_idx" ON "code_suggestions"("created_at");

CREATE TABLE "code_suggestion_feedback" (
    "id" SERIAL NOT NULL,
    "suggestion_id" UUID NOT NULL,
    "user_id" INTEGER NOT NULL,
    "event" TEXT NOT NULL,
    "final_text" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "code_suggestion_feedback_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "code_suggestion_feedback_suggestion_id_fkey" FOREIGN KEY ("suggestion_id") REFERENCES "code_suggestions"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "code_suggestion_feedback_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE INDEX "code_suggestion_feedback_suggestion_id_idx" ON "code_suggestion_feedback"("suggestion_id");
