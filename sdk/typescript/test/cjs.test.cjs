// The CommonJS build loads with require() and works like the ESM one.
const { test } = require("node:test");
const assert = require("node:assert/strict");
const sdk = require("@pixgate/sdk");

test("require('@pixgate/sdk') gives the CommonJS build", () => {
  assert.equal(typeof sdk.Pixgate, "function");
  assert.equal(sdk.Amount.reais("25.90").centavos, 2590);
  assert.equal(sdk.encodeJSON({ amount: "25.90" }), '{"amount":25.9}');
  assert.equal(typeof sdk.OPERATIONS.createCharge, "object");
});
