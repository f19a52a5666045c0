import { runCommand } from './run-command';

// runCommand applies pending migrations before every command; this one only reports them.
void runCommand(async ({ database }) => {
  const result = await database.migrate();
  return { applied: result.applied, upToDate: result.skipped };
});
