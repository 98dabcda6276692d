package telegram

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strconv"
)

// journalResponse journals the updates of a getUpdates answer.
func (in *inbox) journalResponse(body []byte) {
	var r struct {
		OK     bool              `json:"ok"`
		Result []json.RawMessage `json:"result"`
	}
	if json.Unmarshal(body, &r) != nil || !r.OK {
		return
	}
	_, _ = in.journal(r.Result) // a failure is logged
}

// getUpdatesOffset reads the offset of a getUpdates request, and returns
// the request with its body restored: go-telegram/bot sends it as a
// multipart form. It returns 0 when there is none or it cannot be read.
func getUpdatesOffset(req *http.Request) (int64, *http.Request, error) {
	if req.Body == nil {
		return 0, req, nil
	}
	body, err := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	req.Body.Close()
	if err != nil {
		return 0, nil, err
	}
	clone := req.Clone(req.Context())
	clone.Body = io.NopCloser(bytes.NewReader(body))
	clone.ContentLength = int64(len(body))
	clone.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	_, params, err := mime.ParseMediaType(req.Header.Get("Content-Type"))
	if err != nil || params["boundary"] == "" {
		return 0, clone, nil
	}
	form, err := multipart.NewReader(bytes.NewReader(body), params["boundary"]).ReadForm(1 << 20)
	if err != nil {
		return 0, clone, nil
	}
	defer form.RemoveAll()
	offset, _ := strconv.ParseInt(firstValue(form.Value["offset"]), 10, 64)
	return offset, clone, nil
}

func firstValue(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}
