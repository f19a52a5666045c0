import { seedDemo } from '../demo/seed-demo';
import { runCommand } from './run-command';

void runCommand(async ({ database, config }) => {
  const seed = await seedDemo(database.prisma);
  return { token: seed.token, username: seed.username, project: seed.project, url: `http://${config.host}:${config.port}/api/graphql` };
});
