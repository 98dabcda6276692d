package liveview

import (
	"errors"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/liveview/liveviewtest"
)

const testBotToken = "123456:ABC-test-token"

func TestVerifyInitData(t *testing.T) {
	now := time.Date(2026, 12, 3, 5, 0, 0, 0, time.UTC)
	good := liveviewtest.InitFields(42, now.Add(-time.Minute))
	without := func(k string) map[string]string {
		f := liveviewtest.InitFields(42, now.Add(-time.Minute))
		delete(f, k)
		return f
	}
	tamperedQ, _ := url.ParseQuery(liveviewtest.SignInitData(testBotToken, good))
	h := []byte(tamperedQ.Get("hash"))
	h[0] = map[bool]byte{true: '1', false: '0'}[h[0] == '0']
	tamperedQ.Set("hash", string(h))
	tampered := tamperedQ.Encode()
	cases := []struct {
		name, raw string
		wantUser  int64
	}{
		{"good", liveviewtest.SignInitData(testBotToken, good), 42},
		{"another bot's token", liveviewtest.SignInitData("999:other", good), 0},
		{"bad hash", tampered, 0},
		{"field changed after signing", liveviewtest.SignInitData(testBotToken, good) + "&x=1", 0},
		{"stale auth_date", liveviewtest.SignInitData(testBotToken, liveviewtest.InitFields(42, now.Add(-InitDataMaxAge-time.Second))), 0},
		{"auth_date in the future", liveviewtest.SignInitData(testBotToken, liveviewtest.InitFields(42, now.Add(time.Hour))), 0},
		{"no user", liveviewtest.SignInitData(testBotToken, without("user")), 0},
		{"no auth_date", liveviewtest.SignInitData(testBotToken, without("auth_date")), 0},
		{"no hash", url.Values{"user": {`{"id":42}`}, "auth_date": {"1"}}.Encode(), 0},
		{"user without id", liveviewtest.SignInitData(testBotToken, map[string]string{"user": `{"first_name":"A"}`,
			"auth_date": strconv.FormatInt(now.Unix(), 10)}), 0},
		{"empty", "", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := VerifyInitData(testBotToken, c.raw, now, InitDataMaxAge)
			if c.wantUser == 0 {
				if !errors.Is(err, ErrInitData) {
					t.Fatalf("VerifyInitData = %+v, %v; want ErrInitData", got, err)
				}
				return
			}
			if err != nil || got.UserID != c.wantUser {
				t.Fatalf("VerifyInitData = %+v, %v; want user %d", got, err, c.wantUser)
			}
		})
	}
}

func TestVerifyInitDataRefusesARepeatedField(t *testing.T) {
	now := time.Date(2026, 12, 3, 5, 0, 0, 0, time.UTC)
	raw := liveviewtest.SignInitData(testBotToken, liveviewtest.InitFields(42, now)) + "&user=" + url.QueryEscape(`{"id":7}`)
	if _, err := VerifyInitData(testBotToken, raw, now, InitDataMaxAge); !errors.Is(err, ErrInitData) {
		t.Fatalf("a repeated user field passed: %v", err)
	}
}
