CREATE TABLE `changes` (
	`revision` integer PRIMARY KEY NOT NULL,
	`type` text NOT NULL,
	`mesh` text NOT NULL,
	`name` text NOT NULL,
	`operation` text NOT NULL
);
