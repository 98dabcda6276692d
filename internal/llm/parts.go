package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Helpers both adapters use to put parts on the wire.

// supportedImage reports whether both providers accept images of this type.
func supportedImage(img *Image) bool {
	if img == nil || len(img.Data) == 0 {
		return false
	}
	switch img.MIMEType {
	case "image/png", "image/jpeg", "image/gif", "image/webp":
		return true
	}
	return false
}

// imageNote stands in for an image the provider cannot take.
func imageNote(img *Image) string {
	if img == nil || len(img.Data) == 0 {
		return "[image not available]"
	}
	return fmt.Sprintf("[image of type %q omitted: the model accepts PNG, JPEG, GIF and WebP]", img.MIMEType)
}

// toolArguments returns a call's arguments as a JSON object for the wire.
func toolArguments(args json.RawMessage) json.RawMessage {
	args = bytes.TrimSpace(args)
	if len(args) == 0 || args[0] != '{' || !json.Valid(args) {
		return json.RawMessage(`{}`)
	}
	return args
}

// emptySchema is what a tool without a schema sends.
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

func schemaOf(t Tool) json.RawMessage {
	if len(bytes.TrimSpace(t.Schema)) == 0 {
		return emptySchema
	}
	return t.Schema
}
