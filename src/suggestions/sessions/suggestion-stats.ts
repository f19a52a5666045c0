import type { PrismaClient } from '../../db/prisma';

/** Acceptance of the completed suggestions of one language or one intent. */
export type AcceptanceRate = {
  key: string;
  /** Completed suggestions (the ones a client could show in full). */
  shown: number;
  accepted: number;
  rejected: number;
  /** accepted / shown; 0 when none were shown. */
  rate: number;
};

export type SuggestionStats = { byLanguage: AcceptanceRate[]; byIntent: AcceptanceRate[] };

type Row = { language: string | null; intent: string; shown: number; accepted: number; rejected: number };

/** Acceptance rates of the suggestions completed in [from, to), per language and per intent. */
export async function suggestionStats(prisma: PrismaClient, window: { from: Date | null; to: Date | null }): Promise<SuggestionStats> {
  const from = window.from ?? new Date(0);
  const to = window.to ?? new Date('9999-12-31T00:00:00Z');
  const rows = await prisma.$queryRaw<Row[]>`
    SELECT s.language, s.intent, count(*)::int AS shown,
      count(*) FILTER (WHERE EXISTS (SELECT 1 FROM code_suggestion_feedback f WHERE f.suggestion_id = s.id AND f.event = 'ACCEPTED'))::int
      AS accepted,
      count(*) FILTER (WHERE EXISTS (SELECT 1 FROM code_suggestion_feedback f WHERE f.suggestion_id = s.id AND f.event = 'REJECTED'))::int
      AS rejected
    FROM code_suggestions s
    WHERE s.created_at >= ${from} AND s.created_at < ${to}
    GROUP BY s.language, s.intent`;
  return { byLanguage: rollUp(rows, (row) => row.language ?? 'unknown'), byIntent: rollUp(rows, (row) => row.intent) };
}

function rollUp(rows: Row[], keyOf: (row: Row) => string): AcceptanceRate[] {
  const totals = new Map<string, AcceptanceRate>();
  for (const row of rows) {
    const key = keyOf(row);
    const total = totals.get(key) ?? { key, shown: 0, accepted: 0, rejected: 0, rate: 0 };
    total.shown += row.shown;
    total.accepted += row.accepted;
    total.rejected += row.rejected;
    totals.set(key, total);
  }
  return [...totals.values()]
    .map((total) => ({ ...total, rate: total.shown ? total.accepted / total.shown : 0 }))
    .sort((a, b) => a.key.localeCompare(b.key));
}
