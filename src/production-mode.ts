/**
 * The service runs in production mode unless NODE_ENV says otherwise. graphql-js then checks a
 * value's type with a plain `instanceof` instead of its development check for a second copy of
 * itself, on every field it completes (a thread's history of 100 messages without contentHtml:
 * 10.4 against 14.0 ms a query), and Express, Apollo and Prisma take their production defaults
 * (Apollo's that matter are set in src/http/app.ts; Prisma's error format in src/db/database.ts).
 * src/main.ts imports this first: graphql-js reads NODE_ENV once, when it is loaded.
 */
process.env.NODE_ENV ??= 'production';

export {};
