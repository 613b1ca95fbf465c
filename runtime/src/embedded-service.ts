import type { Transport } from "@connectrpc/connect";
import type { ServiceTransports } from "@platform/gateway/services";
import type { Subscription } from "@platform/kit/bus";
import type { Clock } from "@platform/kit/clock";
import type { Routes } from "@platform/kit/connect";
import type { Db } from "@platform/kit/db";
import type { InProcessBus } from "@platform/kit/in-process-bus";
import type { Logger } from "@platform/kit/logger";
import type { MigrationSource } from "@platform/kit/migrate";

/** What the embedded runtime hands a service when it starts it inside the one process. */
export interface EmbeddedContext {
  /** The service's own schema in the shared PGlite, already migrated. */
  db: Db;
  bus: InProcessBus;
  clock: Clock;
  logger: Logger;
  /** PLATFORM_CURSOR_SECRET (services mint the cursors the gateway verifies). */
  cursorSecret: string;
  /** PLATFORM_CONTEXT_SECRET, for services that call another service with a signed context. */
  contextSecret: string;
  sandboxSeed: string;
  /**
   * Where the service reads its own settings (its config spec's variables), process.env
   * unless the embedding caller (a test) passes its own.
   */
  env: NodeJS.ProcessEnv;
  /**
   * Transports of the services started before this one (signing and verifying the request
   * context exactly as over the network); the start order is fixed in platform.ts.
   */
  transports: Partial<ServiceTransports>;
}

/** What a started service gives the embedded runtime. */
export interface EmbeddedParts {
  /** Its Connect routes, behind the trust interceptor. */
  routes: Routes;
  /** Its admin-plane routes, served on the one admin port of the embedded runtime. */
  adminRoutes?: Routes;
  /** Its event consumers and background workers, closed before the bus. */
  consumers?: Subscription[];
  /**
   * Seeds its sandbox data when missing (after every service started, in start order): the
   * service's own seed function, answering whether it wrote anything (identity's answer is
   * whether this start created the sandbox).
   */
  seed?: () => Promise<boolean>;
  /** request-logs: stores a batch of the gateway's request summaries (the gateway's sink in this runtime). */
  requestLogSink?: (batch: { requests: unknown[] }) => Promise<void>;
}

/** A bounded context as the embedded runtime runs it. */
export interface EmbeddedService {
  /** Its key in ServiceTransports and the name of its schema. */
  name: keyof ServiceTransports;
  schema: string;
  migrations: MigrationSource;
  start(ctx: EmbeddedContext): Promise<EmbeddedParts>;
}

export type { Transport };
