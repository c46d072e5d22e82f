/** Rodada's reference web client: the page (app.tsx) in the player's language. */
import { render } from "preact";
import { App } from "./app";
import { preferredLang, setLang } from "./i18n";

const initial = preferredLang();
setLang(initial);
const root = document.getElementById("root") as HTMLElement;
root.replaceChildren(); // the "loading" text the HTML shows until now
render(<App initialLang={initial} />, root);
