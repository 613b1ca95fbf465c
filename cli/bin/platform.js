#!/usr/bin/env node
// Runs the TypeScript sources directly: the CLI lives in a workspace without a build step.
import { register } from "tsx/esm/api";

register();
await import("../src/main.ts");
