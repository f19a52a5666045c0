-- The AiContextItem contract's own fields, kept beside the item rather than inside its metadata.
ALTER TABLE "ai_message_context_items"
    ADD COLUMN "schema_version" TEXT NOT NULL DEFAULT 'v0.0.1',
    ADD COLUMN "item_type" TEXT,
    ADD COLUMN "is_enabled" BOOLEAN NOT NULL DEFAULT true,
    ADD COLUMN "disabled_reasons" TEXT[] DEFAULT ARRAY[]::TEXT[];

-- Idempotent answers: at most one final assistant message per request.
CREATE UNIQUE INDEX "ai_messages_request_id_assistant_key" ON "ai_messages"("request_id") WHERE "role" = 'assistant';
