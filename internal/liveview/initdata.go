package liveview

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// InitDataMaxAge is how old a Mini App's initData may be: Telegram signs it
// when the app opens, and a hand-off lasts minutes, so an hour is plenty
// and a leaked initData is soon worthless.
const InitDataMaxAge = time.Hour

// initDataSkew is how far in the future auth_date may be (clocks differ).
const initDataSkew = 5 * time.Minute

// maxInitData bounds the initData a page may post; Telegram's are well
// under 2 KiB.
const maxInitData = 8 << 10

// ErrInitData is every reason initData is refused; the caller answers all
// alike.
var ErrInitData = errors.New("initData refused")

// InitData is what the bot takes from a verified initData.
type InitData struct {
	UserID   int64
	AuthDate time.Time
}

// VerifyInitData checks a Telegram Mini App's initData (the tgWebAppData of
// its URL fragment, a query string) as Telegram documents it
// (core.telegram.org/bots/webapps, "Validating data received via the Mini
// App"): secret = HMAC-SHA256(key "WebAppData", bot token); hash = hex
// HMAC-SHA256(key secret, data-check-string), the data-check-string being
// every field but hash, sorted by key, as key=value lines joined by "\n";
// auth_date no older than maxAge; a user with an id. Errors wrap
// ErrInitData.
func VerifyInitData(botToken, raw string, now time.Time, maxAge time.Duration) (InitData, error) {
	if botToken == "" || len(raw) > maxInitData {
		return InitData{}, fmt.Errorf("%w: no bot token or too long", ErrInitData)
	}
	vals, err := url.ParseQuery(raw)
	if err != nil {
		return InitData{}, fmt.Errorf("%w: %v", ErrInitData, err)
	}
	hash := vals.Get("hash")
	if len(vals["hash"]) != 1 || hash == "" {
		return InitData{}, fmt.Errorf("%w: no hash", ErrInitData)
	}
	lines := make([]string, 0, len(vals))
	for k, vs := range vals {
		if len(vs) != 1 {
			return InitData{}, fmt.Errorf("%w: field %q repeated", ErrInitData, k)
		}
		if k != "hash" {
			lines = append(lines, k+"="+vs[0])
		}
	}
	sort.Strings(lines)
	want, err := hex.DecodeString(hash)
	if err != nil || !hmac.Equal(want, initDataHash(botToken, strings.Join(lines, "\n"))) {
		return InitData{}, fmt.Errorf("%w: bad hash", ErrInitData)
	}
	return initDataFields(vals, now, maxAge)
}

// initDataHash is the HMAC Telegram signs a data-check-string with.
func initDataHash(botToken, dataCheck string) []byte {
	secret := hmac.New(sha256.New, []byte("WebAppData"))
	secret.Write([]byte(botToken))
	mac := hmac.New(sha256.New, secret.Sum(nil))
	mac.Write([]byte(dataCheck))
	return mac.Sum(nil)
}

// initDataFields reads the signed fields the bot relies on.
func initDataFields(vals url.Values, now time.Time, maxAge time.Duration) (InitData, error) {
	secs, err := strconv.ParseInt(vals.Get("auth_date"), 10, 64)
	if err != nil || secs <= 0 {
		return InitData{}, fmt.Errorf("%w: no auth_date", ErrInitData)
	}
	auth := time.Unix(secs, 0)
	if now.Sub(auth) > maxAge || auth.Sub(now) > initDataSkew {
		return InitData{}, fmt.Errorf("%w: auth_date %s is not fresh", ErrInitData, auth.UTC().Format(time.RFC3339))
	}
	var user struct {
		ID int64 `json:"id"`
	}
	if err := json.Unmarshal([]byte(vals.Get("user")), &user); err != nil || user.ID == 0 {
		return InitData{}, fmt.Errorf("%w: no user", ErrInitData)
	}
	return InitData{UserID: user.ID, AuthDate: auth}, nil
}
