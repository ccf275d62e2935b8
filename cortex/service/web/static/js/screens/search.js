// The Search screen (a stub until it is built).
import {h} from "../dom.js";

export const routes = [
  {path: /^\/search$/, title: "Search", render: async () => h("section", {}, h("h1", {}, "Search"))},
];
