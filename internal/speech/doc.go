// Package speech turns voice notes into text and answers into voice notes
// through OpenAI-compatible audio endpoints (OpenAI, Groq, a local whisper
// or TTS server): POST /audio/transcriptions (Transcriber) and POST
// /audio/speech (Speaker), with the official openai-go client. Spoken says
// what of a Markdown answer is read aloud.
//
// Nothing here knows Telegram: the bot downloads the voice note, checks
// Telegram's size and duration, and sends the Opus file Speak returns with
// sendVoice. Every failure is an *Error, whose UserMessage is what the
// chat is told and whose Error is the operator's (it never holds the key).
package speech
