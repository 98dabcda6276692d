package preset

import (
	"encoding/json"
	"errors"
)

// validStorageState checks a file browser_storage_state wrote before the
// bot keeps it as a chat's state: Playwright's storage state, whole —
// {"cookies": [{"name": …, "value": …, …}], "origins": [{"origin": …,
// "localStorage": […]}]}. A file cut short is not JSON; anything else is
// not a state the browser could restore.
func validStorageState(b []byte) error {
	var st struct {
		Cookies *[]struct {
			Name  *string `json:"name"`
			Value *string `json:"value"`
		} `json:"cookies"`
		Origins *[]struct {
			Origin *string `json:"origin"`
		} `json:"origins"`
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return err
	}
	if st.Cookies == nil || st.Origins == nil {
		return errors.New(`not a storage state: "cookies" or "origins" is missing`)
	}
	for _, c := range *st.Cookies {
		if c.Name == nil || c.Value == nil {
			return errors.New("not a storage state: a cookie without its name or value")
		}
	}
	for _, o := range *st.Origins {
		if o.Origin == nil {
			return errors.New("not a storage state: an origin without its name")
		}
	}
	return nil
}
