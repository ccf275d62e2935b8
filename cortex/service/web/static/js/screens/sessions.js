// The Sessions screen (a stub until it is built).
import {h} from "../dom.js";

export const routes = [
  {path: /^\/sessions$/, title: "Sessions", render: async () => h("section", {}, h("h1", {}, "Sessions"))},
];
