import type { Metadata } from "next";
import type { ReactNode } from "react";
import "./globals.css";

export const metadata: Metadata = {
  title: { default: "rlboard", template: "%s · rlboard" },
  description: "RL post-training runs: metrics, GPU timeline, rollouts, samples and tokens",
  // A private lab tool: no page should be indexed (public/robots.txt says the same).
  robots: { index: false, follow: false },
  // public/favicon.ico, served without a session (proxy.ts matcher)
  icons: { icon: "/favicon.ico" },
};

// Applies the saved theme before first paint so dark-mode users never see a white flash.
const themeScript = `try{var t=localStorage.getItem("rlboard-theme")||(matchMedia("(prefers-color-scheme: dark)").matches?"dark":"light");document.documentElement.dataset.theme=t}catch(e){}`;

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en" suppressHydrationWarning>
      <head>
        <script dangerouslySetInnerHTML={{ __html: themeScript }} />
      </head>
      <body>{children}</body>
    </html>
  );
}
