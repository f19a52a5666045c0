-- Feedback is one row per thing rated: a user's duoUserFeedback on a message, and each event
-- (ACCEPTED, REJECTED, EXECUTED) on a code suggestion. A new one replaces the old, so a user can no
-- longer grow these tables by sending the same feedback again. The newest of any duplicates is kept.
DELETE FROM "ai_message_feedback" AS f
USING "ai_message_feedback" AS newer
WHERE newer."message_id" = f."message_id" AND newer."user_id" = f."user_id" AND newer."id" > f."id";
DROP INDEX "ai_message_feedback_message_id_idx";
CREATE UNIQUE INDEX "ai_message_feedback_message_id_user_id_key" ON "ai_message_feedback"("message_id", "user_id");

DELETE FROM "code_suggestion_feedback" AS f
USING "code_suggestion_feedback" AS newer
WHERE newer."suggestion_id" = f."suggestion_id" AND newer."event" = f."event" AND newer."id" > f."id";
DROP INDEX "code_suggestion_feedback_suggestion_id_idx";
CREATE UNIQUE INDEX "code_suggestion_feedback_suggestion_id_event_key" ON "code_suggestion_feedback"("suggestion_id", "event");
