import { PrismaPg } from '@prisma/adapter-pg';
import { Prisma, PrismaClient } from '../../src/db/prisma';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database';

// The SQL migrations are written by hand (the Prisma schema engine cannot be downloaded here), so
// this checks them against prisma/schema.prisma: every model can be read with all its fields.
describe('prisma/schema.prisma against the migrated database', () => {
  let database: TestDatabase;
  let prisma: PrismaClient;

  beforeAll(async () => {
    database = await createTestDatabase();
    prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: database.url }) });
  });
  afterAll(async () => {
    await prisma.$disconnect();
    await database.drop();
  });

  const models = Object.values(Prisma.ModelName);

  it('knows the models', () => {
    expect(models).toEqual(
      expect.arrayContaining([
        'User',
        'PersonalAccessToken',
        'Group',
        'AddOnPurchase',
        'SeatAssignment',
        'Project',
        'GroupMember',
        'ProjectMember',
        'AiConversationThread',
        'AiMessage',
        'AiMessageContextItem',
        'AiMessageFeedback',
      ]),
    );
  });

  it.each(models)('%s: every column Prisma selects exists', async (model) => {
    const delegate = (prisma as unknown as Record<string, { findFirst(): Promise<unknown> }>)[
      model.charAt(0).toLowerCase() + model.slice(1)
    ];
    await expect(delegate.findFirst()).resolves.toBeNull();
  });

  it('writes and reads every enum and default through Prisma', async () => {
    const user = await prisma.user.create({ data: { username: 'drift', name: 'Drift', email: 'drift@example.com', state: 'blocked' } });
    const group = await prisma.group.create({ data: { path: 'g', fullPath: 'g', name: 'G', plan: 'ultimate' } });
    await prisma.addOnPurchase.create({ data: { groupId: group.id, addOn: 'duo_enterprise', seatCount: 1 } });
    const project = await prisma.project.create({
      data: { groupId: group.id, path: 'p', fullPath: 'g/p', name: 'P', visibility: 'internal' },
    });
    const thread = await prisma.aiConversationThread.create({ data: { userId: user.id, conversationType: 'duo_quick_chat' } });
    const message = await prisma.aiMessage.create({
      data: {
        id: crypto.randomUUID(),
        userId: user.id,
        threadId: thread.id,
        requestId: crypto.randomUUID(),
        role: 'assistant',
        content: 'hi',
        extras: { sources: [] },
        projectId: project.id,
      },
    });
    await prisma.aiMessageContextItem.create({
      data: { messageId: message.id, position: 0, itemId: 'a.ts', category: 'file', content: 'x', metadata: { a: 1 } },
    });
    await prisma.aiMessageFeedback.create({ data: { messageId: message.id, userId: user.id, event: 'accepted' } });
    const read = await prisma.aiMessage.findUniqueOrThrow({ where: { id: message.id }, include: { contextItems: true, feedback: true } });
    expect(read).toMatchObject({
      errors: [],
      extras: { sources: [] },
      hasFeedback: false,
      aiAction: 'chat',
      contextItems: [{ metadata: { a: 1 } }],
      feedback: [{ details: {} }],
    });
  });
});
