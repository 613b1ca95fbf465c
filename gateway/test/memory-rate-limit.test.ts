import { memoryRateLimitStore } from "../src/rate-limit/memory-store.js";
import { describeRateLimitStore } from "./rate-limit-store-contract.js";

describeRateLimitStore("memory", memoryRateLimitStore);
