// The Admin screen (a stub until it is built).
import {h} from "../dom.js";

export const routes = [
  {path: /^\/admin$/, title: "Admin", render: async () => h("section", {}, h("h1", {}, "Admin"))},
];
