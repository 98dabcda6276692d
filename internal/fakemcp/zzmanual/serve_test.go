package zzmanual

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
)

func TestServe(t *testing.T) {
	o := fakemcp.NewOAuthServer(t)
	os.WriteFile("/tmp/oauth.url", []byte(o.URL), 0o644)
	fmt.Println("URL", o.URL)
	time.Sleep(40 * time.Minute)
}
