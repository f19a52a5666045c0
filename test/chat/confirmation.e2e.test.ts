import { randomUUID } from 'node:crypto';
import type { Database } from '../../src/db/database';
import type { PrismaClient } from '../../src/db/prisma';
import { createUserMessage, saveAssistantMessage, takePendingConfirmation } from '../../src/chat/messages.service';
import { userWithToken } from '../helpers/fixtures';
import { createTestDatabase, openTestDatabase, type TestDatabase } from '../helpers/test-database';

// Two "yes" sent together (two tabs, a double click): both read the question as waiting for its
// confirmation; only one may take it and run the prompt.
describe('taking a pending confirmation', () => {
  let database: TestDatabase;
  let opened: Database;
  let prisma: PrismaClient;

  beforeAll(async () => {
    database = await createTestDatabase();
    // The service's own client: Prisma over a pool, where concurrent requests take connections of their own.
    opened = await openTestDatabase(database);
    prisma = opened.prisma;
  });
  afterAll(async () => {
    await opened.close();
    await database.drop();
  });

  it('gives the confirmed prompt to one of several confirmations read at once', async () => {
    const user = await userWithToken(prisma);
    const conversation = { userId: user.id, threadId: null };
    const asked = randomUUID();
    const message = { contextItems: [], clientSubscriptionId: null, platformOrigin: null, agentVersionId: null, resourceId: null };
    await createUserMessage(prisma, {
      ...conversation,
      ...message,
      newThread: null,
      requestId: asked,
      content: 'Write a parser',
      projectId: null,
    });
    await saveAssistantMessage(prisma, {
      ...conversation,
      requestId: asked,
      content: 'Would you like me to write new code?',
      errors: [],
      extras: {
        sources: [],
        contextItemIds: [],
        gatekeeper: { status: 'NEEDS_CONFIRMATION', intent: 'GENERATE_CODE', confidence: 0.5, intents: [] },
      },
      agentVersionId: null,
      clientSubscriptionId: null,
    });
    // Read together, as API processes (each its own client) read it for two requests arriving at once.
    const clients = await Promise.all([0, 1, 2, 3].map(() => openTestDatabase(database)));
    let taken: Array<Awaited<ReturnType<typeof takePendingConfirmation>>>;
    try {
      taken = await Promise.all(clients.map((client) => takePendingConfirmation(client.prisma, conversation, randomUUID())));
    } finally {
      await Promise.all(clients.map((client) => client.close()));
    }
    expect(taken.filter((confirmation) => confirmation !== null)).toEqual([{ requestId: asked, intent: 'GENERATE_CODE' }]);
  });
});
