-- Which database this is (issue 14): one row with a random id, written at the first start (not
-- here: databases cloned from a migrated template must not share it). Each instance claims its
-- REDIS_PREFIX in Redis with this id, so two databases behind one prefix are noticed at start-up.
CREATE TABLE "service_identity" (
    "id" INTEGER NOT NULL DEFAULT 1,
    "database_id" UUID NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "service_identity_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "service_identity_single_row" CHECK ("id" = 1)
);
