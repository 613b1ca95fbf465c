// What `npm run bench -- --suite availability` measures in-process: the handler's steps, so
// the bench can time the longest synchronous piece of work without reaching into src/.

export { type HostAvailability, SLOTS_PER_TURN } from "./application/matching.js";
export { slotStarts } from "./domain/availability.js";
export { SLOT_TOKEN_TAIL_BYTES, slotTokenSigner } from "./domain/slot-token.js";
export { hostGroupMessage } from "./messages.js";
