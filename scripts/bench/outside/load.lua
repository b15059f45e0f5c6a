-- wrk script of scripts/bench/outside.sh: POSTs the operation named by
-- WRK_OP (payout: pix-payment; charge: request-qrcode) round robin over the
-- clients in the file WRK_CLIENTS (lines "id secret"), each request with
-- its own Idempotency-Key (WRK_RUN keeps keys unique across runs) and a
-- callbackUrl/postbackUrl on WRK_HOOK.
local op = os.getenv("WRK_OP") or "payout"
local run = os.getenv("WRK_RUN") or "0"
local hook = os.getenv("WRK_HOOK") or "http://127.0.0.1:9/hook"
local clients = {}
local n = 0
local threads = 0

function setup(thread)
	threads = threads + 1
	thread:set("tid", threads)
end

function init(args)
	for line in io.lines(os.getenv("WRK_CLIENTS")) do
		local id, secret = line:match("^(%S+)%s+(%S+)$")
		if id then
			clients[#clients + 1] = { id = id, secret = secret }
		end
	end
	n = tid or 0
end

local payout = '{"amount": 1.23, "description": "wrk payout", "callbackUrl": "%s",' ..
	'"creditParty": {"name": "Fornecedor Ltda", "keyType": "EMAIL", "key": "fornecedor@example.com"}}'
local charge = '{"amount": 12.34, "external_id": "%s", "postbackUrl": "%s", "payerQuestion": "Pedido wrk",' ..
	'"payer": {"name": "Maria Souza", "document": "52998224725", "phoneNumber": "11987654321", "email": "maria@example.com",' ..
	'"address": {"street": "Rua das Flores", "number": "100", "neighborhood": "Centro", "city": "Recife", "state": "PE", "zipCode": "50000000"}},' ..
	'"products": [{"name": "Produto", "quantity": "1", "price": 12.34}]}'

function request()
	n = n + 1
	local c = clients[(n % #clients) + 1]
	local key = string.format("wrk-%s-%d-%d", run, tid or 0, n)
	local headers = {
		["stpi"] = c.id,
		["stps"] = c.secret,
		["Content-Type"] = "application/json",
		["Idempotency-Key"] = key,
	}
	if op == "charge" then
		return wrk.format("POST", "/api/v1/gateway/request-qrcode", headers, string.format(charge, key, hook))
	end
	return wrk.format("POST", "/api/v1/gateway/pix-payment", headers, string.format(payout, hook))
end

local non2xx = 0
function response(status, headers, body)
	if status ~= 200 and status ~= 201 then
		non2xx = non2xx + 1
		if non2xx <= 3 then
			io.stderr:write("wrk: status " .. status .. ": " .. body .. "\n")
		end
	end
end
