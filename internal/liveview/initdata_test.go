package liveview

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/url"
	"sort"
	"strconv"
	"testing"
	"time"
)

const testBotToken = "123456:ABC-test-token"

// signInitData is initData as a Telegram client sends it: fields plus the
// hash Telegram computes over them with token.
func signInitData(token string, fields map[string]string) string {
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	check := ""
	for i, k := range keys {
		if i > 0 {
			check += "\n"
		}
		check += k + "=" + fields[k]
	}
	key := hmac.New(sha256.New, []byte("WebAppData"))
	key.Write([]byte(token))
	mac := hmac.New(sha256.New, key.Sum(nil))
	mac.Write([]byte(check))
	q := url.Values{}
	for k, v := range fields {
		q.Set(k, v)
	}
	q.Set("hash", hex.EncodeToString(mac.Sum(nil)))
	return q.Encode()
}

func initFields(user int64, auth time.Time) map[string]string {
	return map[string]string{
		"query_id":      "AAHdF6IQAAAAAN0XohDhrOrc",
		"user":          `{"id":` + strconv.FormatInt(user, 10) + `,"first_name":"Ann","language_code":"en"}`,
		"auth_date":     strconv.FormatInt(auth.Unix(), 10),
		"chat_instance": "-1234567890",
		"signature":     "c2lnbmF0dXJl",
	}
}

func TestVerifyInitData(t *testing.T) {
	now := time.Date(2026, 12, 3, 5, 0, 0, 0, time.UTC)
	good := initFields(42, now.Add(-time.Minute))
	without := func(k string) map[string]string {
		f := initFields(42, now.Add(-time.Minute))
		delete(f, k)
		return f
	}
	tamperedQ, _ := url.ParseQuery(signInitData(testBotToken, good))
	h := []byte(tamperedQ.Get("hash"))
	h[0] = map[bool]byte{true: '1', false: '0'}[h[0] == '0']
	tamperedQ.Set("hash", string(h))
	tampered := tamperedQ.Encode()
	cases := []struct {
		name, raw string
		wantUser  int64
	}{
		{"good", signInitData(testBotToken, good), 42},
		{"another bot's token", signInitData("999:other", good), 0},
		{"bad hash", tampered, 0},
		{"field changed after signing", signInitData(testBotToken, good) + "&x=1", 0},
		{"stale auth_date", signInitData(testBotToken, initFields(42, now.Add(-InitDataMaxAge-time.Second))), 0},
		{"auth_date in the future", signInitData(testBotToken, initFields(42, now.Add(time.Hour))), 0},
		{"no user", signInitData(testBotToken, without("user")), 0},
		{"no auth_date", signInitData(testBotToken, without("auth_date")), 0},
		{"no hash", url.Values{"user": {`{"id":42}`}, "auth_date": {"1"}}.Encode(), 0},
		{"user without id", signInitData(testBotToken, map[string]string{"user": `{"first_name":"A"}`,
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
	raw := signInitData(testBotToken, initFields(42, now)) + "&user=" + url.QueryEscape(`{"id":7}`)
	if _, err := VerifyInitData(testBotToken, raw, now, InitDataMaxAge); !errors.Is(err, ErrInitData) {
		t.Fatalf("a repeated user field passed: %v", err)
	}
}
