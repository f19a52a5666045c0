-- A chat job's history read (conversationHistory in src/chat/messages.service.ts) filters on
-- user_id and thread_id and is ordered as (user_id, thread_id, created_at, id) is. Its generic
-- plan, made while the table's statistics say a user has a row or two (a new table, or one that
-- grew faster than autovacuum analyzed it), costs that index and the (user_id, request_id) one the
-- same, and could take the second: every call then read the whole conversation on it and sorted it
-- (9,300 rows, 9,350 buffers, 15-20 ms a call, seen with auto_explain in bench/chat.ts). With the
-- request index on request_id alone, user_id leads only the history's index, so no statistics can
-- lead the planner away from it. A lookup by request (a UUID, one or two rows) reads the new index
-- and checks user_id on those rows.
CREATE INDEX "ai_messages_request_id_idx" ON "ai_messages"("request_id");
DROP INDEX "ai_messages_user_id_request_id_idx";
