// Compiled (never run) by `npm run typecheck`: the published declarations,
// read through the package's exports as a consumer reads them, accept what
// the README shows and refuse what must not compile. Each @ts-expect-error
// fails the compilation if the line below it ever compiles.
import { Amount, Pixgate, constructEvent, RetryError, UnprocessableEntityError, type Account, type Transaction } from "@pixgate/sdk";

export async function readme(pixgate: Pixgate): Promise<void> {
  const payer = {
    name: "Maria Souza", document: "52998224725", phoneNumber: "11987654321", email: "maria@example.com",
    address: { street: "Rua das Flores", number: "100", neighborhood: "Centro", city: "São Paulo", state: "SP", zipCode: "01001000" },
  };
  const charge = await pixgate.createCharge({
    amount: "25.90", external_id: "order-1001", payerQuestion: "Pedido 1001", postbackUrl: "https://example.com/webhooks/pix",
    payer, products: [{ name: "Camiseta", quantity: "1", price: Amount.centavos(2590) }],
  });
  const centavos: number = charge.amount.centavos;
  const requestId: string = charge.lastResponse.requestId;
  void centavos, requestId;

  // @ts-expect-error a number is never money
  await pixgate.createCharge({ amount: 25.9, external_id: "x", payerQuestion: "q", postbackUrl: "u", payer, products: [] });
  await pixgate.createCharge({
    amount: "20.00", external_id: "order-split", payerQuestion: "q", postbackUrl: "u", payer, products: [],
    splits: [{ account_id: "a", percent: "10" }, { account_id: "b", percent: "5.5" }],
  });
  // @ts-expect-error a split is a percent or an amount, not both
  await pixgate.createCharge({ amount: "1", external_id: "x", payerQuestion: "q", postbackUrl: "u", payer, products: [], splits: [{ account_id: "a", percent: "1", amount: "1" }] });
  // @ts-expect-error a number is never money, in a split either
  await pixgate.createCharge({ amount: "1", external_id: "x", payerQuestion: "q", postbackUrl: "u", payer, products: [], splits: [{ account_id: "a", amount: 1.5 }] });
  // @ts-expect-error a batch item needs its external_id
  await pixgate.createPayoutBatch({ external_id: "b", callbackUrl: "u", items: [{ amount: "1", description: "d", creditParty: { keyType: "EVP", key: "k" } }] });
  // @ts-expect-error PIX is not a key type
  await pixgate.createPayout({ amount: "1", description: "d", creditParty: { keyType: "PIX", key: "k" }, callbackUrl: "u" });

  for await (const tx of pixgate.paginate(pixgate.listTransactions, { type: "cashout", limit: 10 })) {
    const t: Transaction = tx;
    // @ts-expect-error the rows are Transactions, not any
    const n: number = tx;
    void n;
    const paid: string | undefined = t.paid_amount?.toString();
    void paid;
  }
  for await (const a of pixgate.paginate(pixgate.listAccounts, { limit: 10 })) {
    const acct: Account = a;
    void acct;
  }
  const seller = await pixgate.createAccount({ name: "Loja do João", document: "52998224725", external_id: "seller-1001" });
  const secret: string | null = seller.data.client_secret;
  void secret;
  const t = await pixgate.createTransfer({ to_account_id: seller.data.account_id, amount: Amount.reais("150.25") }, { idempotencyKey: "repasse-1" });
  const moved: Amount = t.data.amount;
  void moved;
  // @ts-expect-error a number is never money, in a transfer either
  await pixgate.createTransfer({ to_account_id: "a", amount: 150.25 });
  try {
    await pixgate.createPayout({ amount: "1", description: "d", creditParty: { keyType: "EVP", key: "k" }, callbackUrl: "u" }, { idempotencyKey: "k" });
  } catch (e) {
    if (e instanceof RetryError) console.log(e.idempotencyKey);
    if (e instanceof UnprocessableEntityError && e.isInsufficientBalance) console.log(e.details);
  }
  const ev = constructEvent("whsec_x", new Headers(), "{}");
  if (ev.kind === "transaction") {
    const value: Amount = ev.value;
    const share: Amount | null | undefined = ev.splits?.[0]?.amount;
    void value, share;
  }
  if (ev.kind === "split") {
    const from: string = ev.source_payment_id;
    const value: Amount = ev.value;
    void from, value;
  }
  if (ev.kind === "batch") {
    const paid: number = ev.counts.PAID;
    void paid;
  }
}
