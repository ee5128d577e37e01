/** The rlboard version written into every report (package.json "version"). */
import pkg from "@/package.json";

export const RLBOARD_VERSION: string = pkg.version;
