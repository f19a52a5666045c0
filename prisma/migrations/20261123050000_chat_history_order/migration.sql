-- A chat job reads its conversation's newest 200 turns (conversationHistory in
-- src/chat/messages.service.ts): ORDER BY created_at DESC, id DESC LIMIT 200 on (user_id,
-- thread_id). The old index stopped at created_at, so the id tie-break made PostgreSQL read and
-- sort every row of the conversation whenever its statistics were stale (a conversation that grows
-- fast, as a benchmark's does): measured alone, a job's two reads (request, history) cost 3.4 ms of
-- database CPU at 4,000 rows, and more with every turn; 0.6 ms with this index. With id in the
-- index, and thread_id leading the ORDER BY (all rows share it; for IS NULL the planner does not
-- drop it from the index's order as it drops an equality), the read is a backward index scan that
-- stops after 200 rows, whatever the statistics say. The wider index serves every lookup the
-- narrower one served (same leading columns), so that one is dropped.
CREATE INDEX "ai_messages_user_id_thread_id_created_at_id_idx" ON "ai_messages"("user_id", "thread_id", "created_at", "id");
DROP INDEX "ai_messages_user_id_thread_id_created_at_idx";
