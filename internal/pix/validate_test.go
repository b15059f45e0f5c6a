package pix

import (
	"encoding/hex"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

func TestValidCPF(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want bool
	}{
		{"52998224725", true},
		{"12345678909", true},
		{"00000000191", true},
		{"11144477735", true},
		{"98765432100", true}, // both check digits from remainder < 2
		{"39053344705", true},
		{"52998224724", false}, // second check digit wrong
		{"52998224715", false}, // first check digit wrong
		{"12345678900", false},
		{"11111111111", false}, // all equal, passes the checksum
		{"00000000000", false},
		{"99999999999", false},
		{"529.982.247-25", false},
		{"5299822472", false},
		{"529982247250", false},
		{"5299822472a", false},
		{" 52998224725", false},
		{"", false},
		{"５2998224725", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, ValidCPF(tt.in))
		})
	}
}

func TestValidCNPJ(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want bool
	}{
		{"11222333000181", true},
		{"19100000000000", true},
		{"00000000000191", true},
		{"33450952000166", true},
		{"60501609000176", true},
		{"11222333000182", false},
		{"11222333000191", false},
		{"11222333000100", false},
		{"00000000000000", false},
		{"11111111111111", false},
		{"11.222.333/0001-81", false},
		{"1122233300018", false},
		{"112223330001811", false},
		{"1122233300018a", false},
		{"AB222333000181", false}, // alphanumeric CNPJ not accepted: spec says digits only
		{"", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, ValidCNPJ(tt.in))
		})
	}
}

func TestValidDocument(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want bool
	}{
		{"52998224725", true},
		{"11222333000181", true},
		{"52998224724", false},
		{"11222333000182", false},
		{"529982247", false},
		{"529982247251", false},
		{"11111111111", false},
		{"529.982.247-25", false},
		{"", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, ValidDocument(tt.in))
		})
	}
}

func TestValidEmail(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want bool
	}{
		{"joao@example.com", true},
		{"Joao.Silva@Example.COM.br", true},
		{"a@b.co", true},
		{"first.last+tag@sub.domain-x.example.org", true},
		{"x!#$%&'*+/=?^_`{|}~-@example.com", true},
		{"user@123.example.com", true},
		{strings.Repeat("a", 64) + "@example.com", true},
		{"a@" + strings.Repeat("b", 63) + ".com", true},
		{strings.Repeat("a", 64) + "@" + strings.Repeat(strings.Repeat("b", 60)+".", 3) + "commmm", true},   // 254 chars
		{strings.Repeat("a", 64) + "@" + strings.Repeat(strings.Repeat("b", 60)+".", 3) + "commmmm", false}, // 255 chars
		{strings.Repeat("a", 65) + "@example.com", false},
		{"a@" + strings.Repeat("b", 64) + ".com", false},
		{"", false},
		{"joao", false},
		{"@example.com", false},
		{"joao@", false},
		{"joao@@example.com", false},
		{"jo@ao@example.com", false},
		{".joao@example.com", false},
		{"joao.@example.com", false},
		{"jo..ao@example.com", false},
		{"jo ao@example.com", false},
		{" joao@example.com", false},
		{"joao@example.com ", false},
		{"\"joao\"@example.com", false},
		{"jo(a)o@example.com", false},
		{"joão@example.com", false},
		{"joao@localhost", false},
		{"joao@example", false},
		{"joao@example.c", false},
		{"joao@example.c0m", false},
		{"joao@example.123", false},
		{"joao@.example.com", false},
		{"joao@example..com", false},
		{"joao@example.com.", false},
		{"joao@-example.com", false},
		{"joao@example-.com", false},
		{"joao@exa_mple.com", false},
		{"joao@[127.0.0.1]", false},
		{"joao@exämple.com", false},
		{"joao@example.com\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, ValidEmail(tt.in))
		})
	}
}

func TestValidPhone(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want bool
	}{
		{"11987654321", true},
		{"1133334444", true},
		{"+5511987654321", true},
		{"+551133334444", true},
		{"99999999999", true},
		{"01987654321", false},
		{"10987654321", false},
		{"+5501987654321", false},
		{"198765432", false},
		{"119876543210", false},
		{"+55119876543210", false},
		{"+551198765432", true}, // +55 then 10 digits
		{"55119876543", true},   // without '+' the 55 is an area code
		{"+5411987654321", false},
		{"+55", false},
		{"", false},
		{"(11) 98765-4321", false},
		{"11 987654321", false},
		{"1198765432a", false},
		{"+55+5511987654321", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, ValidPhone(tt.in))
		})
	}
}

func TestValidUF(t *testing.T) {
	t.Parallel()
	all := strings.Fields("AC AL AP AM BA CE DF ES GO MA MT MS MG PA PB PR PE PI RJ RN RS RO RR SC SP SE TO")
	require.Len(t, all, 27)
	for _, uf := range all {
		require.True(t, ValidUF(uf), uf)
		require.False(t, ValidUF(strings.ToLower(uf)), uf)
	}
	for _, bad := range []string{"", "S", "SPP", "XX", "BR", "sp", "Sp", " SP", "SP "} {
		require.False(t, ValidUF(bad), bad)
	}
}

func TestValidCEP(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want bool
	}{
		{"01310100", true},
		{"00000000", true},
		{"01310-100", false},
		{"0131010", false},
		{"013101000", false},
		{"0131010a", false},
		{"", false},
		{"٠١٣١٠١٠٠", false}, // Arabic-Indic digits
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, ValidCEP(tt.in))
		})
	}
}

func TestValidExternalID(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want bool
	}{
		{"a", true},
		{"order-123", true},
		{"ORDER_2024.01:abc-XYZ", true},
		{strings.Repeat("x", 64), true},
		{strings.Repeat("x", 65), false},
		{"", false},
		{"order 123", false},
		{"order/123", false},
		{"pedido-çã", false},
		{"a\x00b", false},
		{"a\nb", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, ValidExternalID(tt.in))
		})
	}
}

func TestValidKeyType(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want bool
	}{
		{"CPF", true},
		{"CNPJ", true},
		{"EMAIL", true},
		{"PHONE", true},
		{"EVP", true},
		{"cpf", false},
		{"Email", false},
		{"RANDOM", false},
		{"", false},
		{"CPF ", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, ValidKeyType(tt.in))
		})
	}
}

func TestValidPixKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		kt   KeyType
		key  string
		want bool
	}{
		{KeyCPF, "52998224725", true},
		{KeyCPF, "52998224724", false},
		{KeyCPF, "11111111111", false},
		{KeyCPF, "529.982.247-25", false},
		{KeyCPF, "11222333000181", false},
		{KeyCNPJ, "11222333000181", true},
		{KeyCNPJ, "11222333000182", false},
		{KeyCNPJ, "52998224725", false},
		{KeyEmail, "joao@example.com", true},
		{KeyEmail, strings.Repeat("a", 65-1) + "@example.com", true}, // 76 chars
		{KeyEmail, "a@" + strings.Repeat("b", 60) + "." + strings.Repeat("c", 10) + ".com", true},  // 77 chars
		{KeyEmail, "a@" + strings.Repeat("b", 60) + "." + strings.Repeat("c", 11) + ".com", false}, // 78 chars
		{KeyEmail, "joao@example", false},
		{KeyPhone, "+5511987654321", true},
		{KeyPhone, "+551133334444", true},
		{KeyPhone, "11987654321", false}, // +55 required for a key
		{KeyPhone, "5511987654321", false},
		{KeyPhone, "+5501987654321", false},
		{KeyPhone, "+5510987654321", false},
		{KeyPhone, "+55119876543210", false},
		{KeyPhone, "+55119876543", false},
		{KeyPhone, "+55 11987654321", false},
		{KeyEVP, "123e4567-e89b-42d3-a456-426614174000", true},
		{KeyEVP, "123E4567-E89B-42D3-A456-426614174000", true},
		{KeyEVP, "f47ac10b-58cc-4372-8567-0e02b2c3d479", true},
		{KeyEVP, "f47ac10b-58cc-4372-9567-0e02b2c3d479", true},
		{KeyEVP, "f47ac10b-58cc-4372-b567-0e02b2c3d479", true},
		{KeyEVP, "f47ac10b-58cc-4372-B567-0e02b2c3d479", true},
		{KeyEVP, "f47ac10b-58cc-4372-c567-0e02b2c3d479", false}, // variant
		{KeyEVP, "f47ac10b-58cc-4372-7567-0e02b2c3d479", false}, // variant
		{KeyEVP, "f47ac10b-58cc-1372-8567-0e02b2c3d479", false}, // version 1
		{KeyEVP, "f47ac10b-58cc-7372-8567-0e02b2c3d479", false}, // version 7
		{KeyEVP, "f47ac10b58cc437285670e02b2c3d479", false},
		{KeyEVP, "{f47ac10b-58cc-4372-8567-0e02b2c3d479}", false},
		{KeyEVP, "urn:uuid:f47ac10b-58cc-4372-8567-0e02b2c3d479", false},
		{KeyEVP, "f47ac10b-58cc-4372-8567-0e02b2c3d47g", false},
		{KeyEVP, "f47ac10b-58cc-4372-8567_0e02b2c3d479", false},
		{KeyEVP, "f47ac10b-58cc-4372-8567-0e02b2c3d4799", false},
		{KeyEVP, "00000000-0000-0000-0000-000000000000", false},
		{KeyEVP, "", false},
		{KeyType("cpf"), "52998224725", false},
		{KeyType("RANDOM"), "f47ac10b-58cc-4372-8567-0e02b2c3d479", false},
		{KeyType(""), "", false},
	}
	for _, tt := range tests {
		t.Run(string(tt.kt)+"/"+tt.key, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, ValidPixKey(tt.kt, tt.key))
		})
	}
}

func TestMaskKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		kt   KeyType
		key  string
		want string
	}{
		{KeyCPF, "52998224725", "***.982.247-**"},
		{KeyCNPJ, "11222333000181", "**.***.333/0001-**"},
		{KeyEmail, "joao@example.com", "j***@example.com"},
		{KeyEmail, "ab@b.co", "a***@b.co"},
		{KeyEmail, "a@b.co", "***@b.co"},
		{KeyEmail, "*@0.AA", "***@0.AA"},
		{KeyPhone, "+5511987654321", "+55*******4321"},
		{KeyPhone, "+551133334444", "+55******4444"},
		{KeyEVP, "f47ac10b-58cc-4372-8567-0e02b2c3d479", "********-****-****-****-****b2c3d479"},
		// invalid keys are masked generically
		{KeyCPF, "52998224724", "***24"},
		{KeyEmail, "not-an-email", "***il"},
		{KeyEVP, "short", "***"},
		{KeyType("X"), "secret-value\n", "***"},
		{KeyPhone, "", "***"},
	}
	for _, tt := range tests {
		t.Run(string(tt.kt)+"/"+tt.key, func(t *testing.T) {
			t.Parallel()
			got := MaskKey(tt.kt, tt.key)
			require.Equal(t, tt.want, got)
			if len(tt.key) >= 4 && !strings.Contains(tt.key, "*") {
				require.NotContains(t, got, tt.key, "reveals the key")
			}
		})
	}
}

func TestMaskDocument(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want string
	}{
		{"52998224725", "***.982.247-**"},
		{"11222333000181", "**.***.333/0001-**"},
		{"12345678901", "***.456.789-**"}, // shape only, no check-digit test
		{"", "***"},
		{"1234", "***"},
		{"1234567", "***"},
		{"abcdefgh", "***gh"},
		{"abcdefg\n", "***"},
		{"abcdefgã", "***"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got := MaskDocument(tt.in)
			require.Equal(t, tt.want, got)
			if tt.in != "" {
				require.NotContains(t, got, tt.in)
			}
		})
	}
}

// parseUUID decodes a canonical 8-4-4-4-12 UUID independently of the code
// under test.
func parseUUID(s string) ([16]byte, bool) {
	var u [16]byte
	parts := strings.Split(s, "-")
	if len(parts) != 5 {
		return u, false
	}
	for i, n := range []int{8, 4, 4, 4, 12} {
		if len(parts[i]) != n {
			return u, false
		}
	}
	b, err := hex.DecodeString(strings.Join(parts, ""))
	if err != nil || len(b) != 16 {
		return u, false
	}
	copy(u[:], b)
	return u, true
}

func FuzzValidPixKey(f *testing.F) {
	for _, seed := range [][2]string{
		{"CPF", "52998224725"},
		{"CNPJ", "11222333000181"},
		{"EMAIL", "joao@example.com"},
		{"PHONE", "+5511987654321"},
		{"EVP", "f47ac10b-58cc-4372-8567-0e02b2c3d479"},
		{"EVP", "F47AC10B-58CC-4372-B567-0E02B2C3D479"},
		{"EMAIL", "a@b"},
		{"PHONE", "+55"},
		{"X", ""},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, kt, key string) {
		keyType := KeyType(kt)
		ok := ValidPixKey(keyType, key)
		masked := MaskKey(keyType, key)
		require.True(t, utf8.ValidString(masked), "mask %q", masked)
		if len(key) >= 4 && !strings.Contains(key, "*") {
			require.NotContains(t, masked, key, "mask reveals the key")
		}
		if !ok {
			return
		}
		require.True(t, ValidKeyType(kt))
		require.NotEqual(t, key, masked)
		switch keyType {
		case KeyCPF:
			require.Len(t, key, 11)
			require.True(t, ValidDocument(key))
		case KeyCNPJ:
			require.Len(t, key, 14)
			require.True(t, ValidDocument(key))
		case KeyEmail:
			require.LessOrEqual(t, len(key), MaxEmailKeyLen)
			require.True(t, ValidEmail(key))
			require.Equal(t, 1, strings.Count(key, "@"))
		case KeyPhone:
			require.True(t, strings.HasPrefix(key, "+55"))
			require.True(t, ValidPhone(key))
			require.Contains(t, []int{13, 14}, len(key))
		case KeyEVP:
			u, ok := parseUUID(key)
			require.True(t, ok, "accepted EVP %q does not parse as a UUID", key)
			require.Equal(t, byte(4), u[6]>>4, "version")
			require.Equal(t, byte(2), u[8]>>6, "variant")
		}
	})
}

func TestValidText(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]bool{
		"": true, "order-1001": true, "São Paulo": true, "✓ pago": true,
		"a\x00b": false, "\x00": false, "bad\xffutf8": false, "\xc3": false,
	} {
		require.Equal(t, want, ValidText(s), "%q", s)
	}
}

func TestPlainText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		s    string
		want bool
	}{
		{"", true},
		{"João da Silva", true},
		{"Pedido nº 123 — açaí ✓", true},
		{"שלום עליכם", true},         // right-to-left letters are text, not overrides
		{"a\u200fb", true},           // RIGHT-TO-LEFT MARK is not an override
		{"\u00a0non-breaking", true}, // U+00A0 is just past C1
		{"\u2029", true},             // PARAGRAPH SEPARATOR is not in the refused ranges
		{"\u2065", true},             // unassigned, between the two bidi ranges
		{"\u206a", true},             // just past the isolates
		{"\u2029\u202a", false},
		{"a\x00b", false},
		{"bell\x07", false},
		{"esc\x1b[31m", false},
		{"line\nbreak", false},
		{"carriage\rreturn", false},
		{"tab\there", false},
		{"\x1f", false},
		{"del\x7f", false},
		{"c1\u0080", false},
		{"c1\u0085next line", false},
		{"c1\u009f", false},
		{"\u202aembedding", false},
		{"\u202boverride", false},
		{"\u202cpop", false},
		{"\u202dLRO", false},
		{"abc\u202efdp.exe", false},
		{"\u2066isolate", false},
		{"\u2067", false},
		{"\u2068", false},
		{"\u2069", false},
	} {
		require.Equal(t, tc.want, PlainText(tc.s), "%q", tc.s)
	}
}

func TestMaskPayerDocument(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"12345678909":        "***.456.789-**",
		"52998224725":        "***.982.247-**",
		"123.456.789-09":     "***.456.789-**",
		"***.456.789-**":     "***.456.789-**",
		"12345678000195":     "**.345.678/0001-**",
		"12.345.678/0001-95": "**.345.678/0001-**",
		"**.345.678/0001-**": "**.345.678/0001-**",
		"12ABC34501DE35":     "**.ABC.345/01DE-**",
		"":                   "",
		"1234567890":         "",
		"123456789012":       "",
		"1234567890123X":     "",
		"abc.def.ghi-jk":     "",
		"***.***.789-**":     "",
		"Maria da Silva":     "",
	} {
		require.Equal(t, want, MaskPayerDocument(in), "%q", in)
	}
}
