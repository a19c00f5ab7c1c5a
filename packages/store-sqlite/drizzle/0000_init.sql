CREATE TABLE `resources` (
	`type` text NOT NULL,
	`mesh` text NOT NULL,
	`name` text NOT NULL,
	`spec` text NOT NULL,
	`version` integer NOT NULL,
	`creation_time` text NOT NULL,
	`modification_time` text NOT NULL,
	`labels` text DEFAULT '{}' NOT NULL,
	PRIMARY KEY(`type`, `mesh`, `name`)
);
--> statement-breakpoint
CREATE INDEX `resources_mesh` ON `resources` (`mesh`);--> statement-breakpoint
CREATE TABLE `settings` (
	`key` text PRIMARY KEY NOT NULL,
	`value` text NOT NULL
);
