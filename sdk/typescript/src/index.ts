/** The pixgate SDK for TypeScript and JavaScript (Node 18+, no runtime dependency). */
export { Amount, Percent, type AmountInput, type PercentInput } from "./amount.js";
export { Pixgate, newIdempotencyKey, type PageRow, type PixgateOptions } from "./client.js";
export * from "./errors.js";
export { OPERATIONS, type OperationId, type Policy } from "./operations.js";
export type * from "./types.js";
export * from "./webhook.js";
export { decodeJSON, encodeJSON, MONEY_KEYS, PERCENT_KEYS } from "./json.js";
