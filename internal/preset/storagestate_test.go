package preset

import (
	"strings"
	"testing"
)

func TestValidStorageState(t *testing.T) {
	whole := `{
  "cookies": [{"name": "who", "value": "alice", "domain": "127.0.0.1", "path": "/", "expires": 1796260709.6, "httpOnly": false, "secure": false, "sameSite": "Lax"}],
  "origins": [{"origin": "http://127.0.0.1:36983", "localStorage": [{"name": "who", "value": "alice"}]}]
}`
	for _, tt := range []struct {
		name, in string
		ok       bool
	}{
		{"a login", whole, true},
		{"nothing", `{"cookies":[],"origins":[]}`, true},
		{"cut short", whole[:len(whole)/3], false},
		{"cut at a boundary", whole[:strings.Index(whole, `"origins"`)], false},
		{"empty", ``, false},
		{"not an object", `[]`, false},
		{"no origins", `{"cookies":[]}`, false},
		{"null cookies", `{"cookies":null,"origins":[]}`, false},
		{"a cookie without a value", `{"cookies":[{"name":"who"}],"origins":[]}`, false},
		{"an origin without its name", `{"cookies":[],"origins":[{"localStorage":[]}]}`, false},
		{"another server's state", `{"value":"logged in"}`, false},
	} {
		if err := validStorageState([]byte(tt.in)); (err == nil) != tt.ok {
			t.Errorf("%s: %v, want ok %v", tt.name, err, tt.ok)
		}
	}
}
