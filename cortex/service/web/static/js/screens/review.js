// The Review screen (a stub until it is built).
import {h} from "../dom.js";

export const routes = [
  {path: /^\/review$/, title: "Review", render: async () => h("section", {}, h("h1", {}, "Review"))},
];
