package telegramtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	_ "image/gif" // photo dimensions
	_ "image/jpeg"
	_ "image/png"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/go-telegram/bot/models"

	"github.com/volcanicbot/volcanicbot/internal/telegram/tgformat"
)

// Telegram's limits on uploads that the fake enforces (those on texts are
// tgformat's).
const (
	maxPhotoBytes  = 10 << 20
	maxUploadBytes = 50 << 20
)

// apiError is an error answer: {"ok":false,"error_code":…}.
type apiError struct {
	status      int
	description string
	retryAfter  int
}

func (e *apiError) Error() string { return e.description }

func badRequest(format string, args ...any) *apiError {
	return &apiError{status: http.StatusBadRequest, description: "Bad Request: " + fmt.Sprintf(format, args...)}
}

func (f *Fake) serve(w http.ResponseWriter, r *http.Request) {
	if rest, ok := strings.CutPrefix(r.URL.Path, "/file/bot"); ok {
		f.serveFile(w, r, rest)
		return
	}
	// /bot<token>/<method>
	rest, ok := strings.CutPrefix(r.URL.Path, "/bot")
	token, method, ok2 := strings.Cut(rest, "/")
	if !ok || !ok2 || method == "" {
		writeError(w, &apiError{status: http.StatusNotFound, description: "Not Found"})
		return
	}
	params, files, perr := parseParams(r)
	req := Request{Method: method, Params: params, Files: files, Time: time.Now()}

	var result any
	var err error
	switch {
	case token != f.token:
		err = &apiError{status: http.StatusUnauthorized, description: "Unauthorized"}
	case perr != nil:
		err = badRequest("%v", perr)
	default:
		if fail, ok := f.takeFailure(method); ok {
			err = &apiError{status: fail.status, description: fail.description, retryAfter: fail.retryAfter}
		} else if why := f.refusedBy(method, chatIDOf(params)); why != "" {
			err = &apiError{status: http.StatusForbidden, description: why}
		} else if tooMany := f.checkLimits(method, chatIDOf(params), req.Time); tooMany != nil {
			err = tooMany
		} else if strings.EqualFold(method, "getUpdates") && f.WebhookURL() != "" {
			err = &apiError{status: http.StatusConflict,
				description: "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first"}
		} else if strings.EqualFold(method, "getUpdates") {
			// Record first: a long poll can last a while.
			f.record(req, http.StatusOK)
			f.getUpdates(w, r, params)
			return
		} else {
			result, err = f.call(method, params, files)
		}
	}
	status := http.StatusOK
	var ae *apiError
	if errors.As(err, &ae) {
		status = ae.status
	} else if err != nil {
		ae = &apiError{status: http.StatusInternalServerError, description: err.Error()}
		status = ae.status
	}
	f.record(req, status)
	if ae != nil {
		writeError(w, ae)
		return
	}
	writeResult(w, result)
}

func (f *Fake) record(req Request, status int) {
	req.Status = status
	f.mu.Lock()
	f.requests = append(f.requests, req)
	f.counts[strings.ToLower(req.Method)]++
	f.notifyLocked()
	f.mu.Unlock()
}

func (f *Fake) takeFailure(method string) (failure, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	key := strings.ToLower(method)
	q := f.failures[key]
	if len(q) == 0 {
		return failure{}, false
	}
	f.failures[key] = q[1:]
	return q[0], true
}

func writeResult(w http.ResponseWriter, result any) {
	body, err := json.Marshal(map[string]any{"ok": true, "result": result})
	if err != nil {
		writeError(w, &apiError{status: http.StatusInternalServerError, description: "telegramtest: " + err.Error()})
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

func writeError(w http.ResponseWriter, e *apiError) {
	v := map[string]any{"ok": false, "error_code": e.status, "description": e.description}
	if e.retryAfter > 0 {
		v["parameters"] = map[string]any{"retry_after": e.retryAfter}
	}
	body, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.status)
	_, _ = w.Write(body)
}

// parseParams reads the parameters the way the Bot API accepts them:
// multipart/form-data (go-telegram/bot always sends it), URL-encoded forms,
// JSON bodies and the query string.
func parseParams(r *http.Request) (map[string]string, map[string]File, error) {
	params := map[string]string{}
	files := map[string]File{}
	for k, v := range r.URL.Query() {
		params[k] = v[0]
	}
	if r.Body == nil {
		return params, files, nil
	}
	ct, ctParams, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch ct {
	case "multipart/form-data":
		mr := multipart.NewReader(r.Body, ctParams["boundary"])
		for {
			p, err := mr.NextPart()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return params, files, fmt.Errorf("multipart: %w", err)
			}
			data, err := io.ReadAll(io.LimitReader(p, maxUploadBytes+1))
			if err != nil {
				return params, files, fmt.Errorf("multipart part %s: %w", p.FormName(), err)
			}
			if p.FileName() != "" {
				files[p.FormName()] = File{Field: p.FormName(), Filename: p.FileName(), Data: data}
				continue
			}
			params[p.FormName()] = string(data)
		}
	case "application/x-www-form-urlencoded":
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return params, files, err
		}
		vals, err := url.ParseQuery(string(body))
		if err != nil {
			return params, files, err
		}
		for k, v := range vals {
			params[k] = v[0]
		}
	case "application/json":
		var m map[string]json.RawMessage
		if err := json.NewDecoder(r.Body).Decode(&m); err != nil && !errors.Is(err, io.EOF) {
			return params, files, err
		}
		for k, v := range m {
			var s string
			if json.Unmarshal(v, &s) == nil {
				params[k] = s
			} else {
				params[k] = string(v)
			}
		}
	default:
		_, _ = io.Copy(io.Discard, r.Body)
	}
	return params, files, nil
}

// getUpdates answers at once when updates are pending, otherwise waits for
// one until its timeout (seconds) passes, the client goes or the fake
// closes.
func (f *Fake) getUpdates(w http.ResponseWriter, r *http.Request, p map[string]string) {
	offset, _ := strconv.ParseInt(p["offset"], 10, 64)
	limit, _ := strconv.Atoi(p["limit"])
	if limit <= 0 || limit > 100 {
		limit = 100
	}
	timeout, _ := strconv.Atoi(p["timeout"])
	deadline := time.NewTimer(time.Duration(timeout) * time.Second)
	defer deadline.Stop()
	if raw := p["allowed_updates"]; raw != "" {
		var allowed []string
		if err := json.Unmarshal([]byte(raw), &allowed); err == nil {
			f.mu.Lock()
			f.allowed = allowed // it persists, as Telegram's does
			f.mu.Unlock()
		}
	}
	for {
		f.mu.Lock()
		if kept := filterAllowed(f.updates, f.allowed); len(kept) != len(f.updates) {
			f.updates = kept // Telegram never keeps what the bot did not ask for
			f.notifyLocked()
		}
		if offset > 0 {
			// Updates below offset are confirmed: forget them.
			i := 0
			for i < len(f.updates) && f.updates[i].ID < offset {
				i++
			}
			f.updates = f.updates[i:]
			if i > 0 {
				f.notifyLocked()
			}
		}
		n := min(limit, len(f.updates))
		pending := append([]models.Update(nil), f.updates[:n]...)
		ch := f.changed
		f.mu.Unlock()
		if len(pending) > 0 {
			writeResult(w, pending)
			return
		}
		select {
		case <-ch:
		case <-deadline.C:
			writeResult(w, []models.Update{})
			return
		case <-f.closed:
			writeResult(w, []models.Update{})
			return
		case <-r.Context().Done():
			return
		}
	}
}

// call runs every method except getUpdates.
func (f *Fake) call(method string, p map[string]string, files map[string]File) (any, error) {
	switch strings.ToLower(method) {
	case "getme":
		return f.me, nil
	case "setwebhook":
		return f.setWebhook(p)
	case "deletewebhook":
		return f.deleteWebhook(p)
	case "getfile":
		return f.getFile(p)
	case "getwebhookinfo":
		return f.webhookInfo(), nil
	case "setmycommands":
		var cmds []models.BotCommand
		if err := json.Unmarshal([]byte(p["commands"]), &cmds); err != nil {
			return nil, badRequest("can't parse commands JSON object")
		}
		f.mu.Lock()
		f.commands = cmds
		f.mu.Unlock()
		return true, nil
	case "getmycommands":
		return f.Commands(), nil
	case "deletemycommands":
		f.mu.Lock()
		f.commands = nil
		f.mu.Unlock()
		return true, nil
	case "sendchataction", "setmessagereaction":
		chat, err := chatID(p)
		if err != nil {
			return nil, err
		}
		if _, err := f.threadOf(chat, p); err != nil {
			return nil, err
		}
		return true, nil
	case "answercallbackquery":
		return f.answerCallbackQuery(p)
	case "editmessagereplymarkup":
		return f.editMessageReplyMarkup(p)
	case "sendmessage":
		return f.sendMessage(p)
	case "editmessagetext":
		return f.editMessageText(p)
	case "deletemessage":
		return f.deleteMessage(p)
	case "sendmessagedraft":
		return f.sendMessageDraft(p)
	case "sendphoto":
		return f.sendFile("sendPhoto", "photo", p, files)
	case "senddocument":
		return f.sendFile("sendDocument", "document", p, files)
	case "sendvoice":
		return f.sendFile("sendVoice", "voice", p, files)
	}
	return nil, &apiError{status: http.StatusNotFound, description: "Not Found: method not found"}
}

// chatIDOf is the request's numeric chat_id, 0 when it has none.
func chatIDOf(p map[string]string) int64 {
	id, _ := strconv.ParseInt(p["chat_id"], 10, 64)
	return id
}

func chatID(p map[string]string) (int64, error) {
	s := p["chat_id"]
	if s == "" {
		return 0, badRequest("chat_id is empty")
	}
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, badRequest("chat not found")
	}
	return id, nil
}

// checkText validates a message text or caption against parse_mode and
// the length limit (counted on the text without markup).
func checkText(text, parseMode string, limit int, what string) error {
	plain := text
	switch strings.ToLower(parseMode) {
	case "":
	case "html":
		var err error
		if plain, err = ValidateHTML(text); err != nil {
			return badRequest("can't parse entities: %v", err)
		}
	default:
		// MarkdownV2 and Markdown are accepted unchecked.
	}
	if tgformat.UTF16Len(plain) > limit {
		return badRequest("%s is too long", what)
	}
	return nil
}

func noPreview(p map[string]string) bool {
	if p["disable_web_page_preview"] == "true" {
		return true
	}
	var o models.LinkPreviewOptions
	if json.Unmarshal([]byte(p["link_preview_options"]), &o) == nil && o.IsDisabled != nil {
		return *o.IsDisabled
	}
	return false
}

func (f *Fake) sendMessage(p map[string]string) (any, error) {
	chat, err := chatID(p)
	if err != nil {
		return nil, err
	}
	text := p["text"]
	if strings.TrimSpace(text) == "" {
		return nil, badRequest("message text is empty")
	}
	if err := checkText(text, p["parse_mode"], tgformat.MaxMessageUTF16, "message"); err != nil {
		return nil, err
	}
	kb, err := parseKeyboard(p["reply_markup"], chat)
	if err != nil {
		return nil, err
	}
	thread, err := f.threadOf(chat, p)
	if err != nil {
		return nil, err
	}
	m := f.store(&Message{ChatID: chat, ThreadID: thread, Method: "sendMessage", Text: text, ParseMode: p["parse_mode"], NoPreview: noPreview(p), Keyboard: kb})
	return f.wire(m), nil
}

func (f *Fake) editMessageText(p map[string]string) (any, error) {
	chat, err := chatID(p)
	if err != nil {
		return nil, err
	}
	id, _ := strconv.Atoi(p["message_id"])
	text := p["text"]
	if strings.TrimSpace(text) == "" {
		return nil, badRequest("message text is empty")
	}
	if err := checkText(text, p["parse_mode"], tgformat.MaxMessageUTF16, "message"); err != nil {
		return nil, err
	}
	// Without reply_markup the edit removes the inline keyboard.
	kb, err := parseKeyboard(p["reply_markup"], chat)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	m := f.findLocked(chat, id)
	switch {
	case m == nil || m.Deleted:
		return nil, badRequest("message to edit not found")
	case m.Method != "sendMessage":
		return nil, badRequest("there is no text in the message to edit")
	case m.Text == text && m.ParseMode == p["parse_mode"] && keyboardsEqual(m.Keyboard, kb):
		return nil, badRequest("message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message")
	}
	m.Text, m.ParseMode, m.NoPreview, m.Keyboard = text, p["parse_mode"], noPreview(p), kb
	m.History = append(m.History, text)
	f.notifyLocked()
	w := f.wireLocked(m)
	w.EditDate = int(time.Now().Unix())
	return w, nil
}

func (f *Fake) deleteMessage(p map[string]string) (any, error) {
	chat, err := chatID(p)
	if err != nil {
		return nil, err
	}
	id, _ := strconv.Atoi(p["message_id"])
	f.mu.Lock()
	defer f.mu.Unlock()
	m := f.findLocked(chat, id)
	if m == nil || m.Deleted {
		return nil, badRequest("message to delete not found")
	}
	m.Deleted = true
	f.notifyLocked()
	return true, nil
}

func (f *Fake) sendFile(method, field string, p map[string]string, files map[string]File) (any, error) {
	chat, err := chatID(p)
	if err != nil {
		return nil, err
	}
	caption := p["caption"]
	if err := checkText(caption, p["parse_mode"], tgformat.MaxCaptionUTF16, "message caption"); err != nil {
		return nil, err
	}
	thread, err := f.threadOf(chat, p)
	if err != nil {
		return nil, err
	}
	m := &Message{ChatID: chat, ThreadID: thread, Method: method, Text: caption, ParseMode: p["parse_mode"]}
	file, uploaded := files[field]
	switch {
	case uploaded:
		if len(file.Data) == 0 {
			return nil, badRequest("file must be non-empty")
		}
		if len(file.Data) > maxUploadBytes {
			return nil, &apiError{status: http.StatusRequestEntityTooLarge, description: "Request Entity Too Large"}
		}
		if method == "sendPhoto" {
			if err := checkPhoto(file.Data); err != nil {
				return nil, err
			}
		}
		m.File = &file
	case p[field] != "":
		m.FileRef = p[field]
	default:
		return nil, badRequest("there is no %s in the request", field)
	}
	m = f.store(m)
	return f.wire(m), nil
}

// checkPhoto applies Telegram's photo rules: at most 10 MB, width +
// height at most 10000, a ratio of at most 20. PNG, JPEG and GIF are
// decoded; WebP is accepted as is.
func checkPhoto(data []byte) error {
	if len(data) > maxPhotoBytes {
		return badRequest("PHOTO_INVALID_DIMENSIONS")
	}
	if http.DetectContentType(data) == "image/webp" {
		return nil
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return badRequest("IMAGE_PROCESS_FAILED")
	}
	w, h := cfg.Width, cfg.Height
	if w <= 0 || h <= 0 || w+h > 10000 || w > 20*h || h > 20*w {
		return badRequest("PHOTO_INVALID_DIMENSIONS")
	}
	return nil
}

func (f *Fake) store(m *Message) *Message {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.messageID++
	m.ID = f.messageID
	m.History = []string{m.Text}
	f.messages = append(f.messages, m)
	f.notifyLocked()
	return m
}

func (f *Fake) findLocked(chat int64, id int) *Message {
	for _, m := range f.messages {
		if m.ChatID == chat && m.ID == id {
			return m
		}
	}
	return nil
}

func (f *Fake) wire(m *Message) *models.Message {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.wireLocked(m)
}

// wireLocked is the Bot API's view of a message the bot sent.
func (f *Fake) wireLocked(m *Message) *models.Message {
	me := f.me
	w := &models.Message{ID: m.ID, From: &me, Date: int(time.Now().Unix()), Chat: f.wireChatLocked(m.ChatID)}
	if m.ThreadID != 0 {
		w.MessageThreadID, w.IsTopicMessage = m.ThreadID, true
	}
	fileID := "file-" + strconv.Itoa(m.ID)
	switch m.Method {
	case "sendMessage":
		w.Text = m.Text
		if strings.EqualFold(m.ParseMode, "html") {
			w.Text, _ = ValidateHTML(m.Text)
		}
	case "sendPhoto":
		w.Caption = m.Text
		ps := models.PhotoSize{FileID: fileID, FileUniqueID: fileID}
		if m.File != nil {
			ps.FileSize = len(m.File.Data)
			if cfg, _, err := image.DecodeConfig(bytes.NewReader(m.File.Data)); err == nil {
				ps.Width, ps.Height = cfg.Width, cfg.Height
			}
		}
		w.Photo = []models.PhotoSize{ps}
	case "sendDocument":
		w.Caption = m.Text
		d := &models.Document{FileID: fileID, FileUniqueID: fileID}
		if m.File != nil {
			d.FileName = m.File.Filename
			d.FileSize = int64(len(m.File.Data))
			d.MimeType = http.DetectContentType(m.File.Data)
		}
		w.Document = d
	case "sendVoice":
		w.Caption = m.Text
		v := &models.Voice{FileID: fileID, FileUniqueID: fileID, MimeType: "audio/ogg"}
		if m.File != nil {
			v.FileSize = int64(len(m.File.Data))
		}
		w.Voice = v
	}
	return w
}
