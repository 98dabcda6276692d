package liveview

import (
	"testing"
	"testing/synctest"
)

func synctestRun(t *testing.T, f func(t *testing.T)) {
	synctest.Test(t, f)
}
