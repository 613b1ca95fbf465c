// What `npm run bench -- --suite events` times in-process: the summary's read against real
// Postgres at two data sizes, without reaching into src/.
export { periodStart } from "./domain/period.js";
export { txStore as analyticsReads } from "./store/index.js";
